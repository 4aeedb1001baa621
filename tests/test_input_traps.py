"""Small input traps, each over every public function, class and method that takes an array.

- An ndarray subclass whose buffer is not all of its data (a masked array; a subclass with its own ``__array__``) is
  refused with a typed error naming the argument, by every array argument of every callable, ``out`` included.
- A value that its dtype cannot hold (``[1e300]`` as float32) is a typed error, and no NumPy warning escapes
  simdbind on the way (the tests run with warnings as errors, as ``python -W error`` does).
- ``Library.set_threads`` takes the integer rule of every other size.

The callables are derived from ``simdbind.__all__`` (functions, the classes and their public methods, and the
functions of ``simdbind.activation``); VALID holds one valid call of each, and a test checks that every derived
callable is in it or in NO_ARRAYS, so that a new public function cannot escape these tests.
"""

from __future__ import annotations

import enum
import inspect
import re
import subprocess
import sys
import warnings
from typing import Any, Callable

import numpy as np
import pytest

import simdbind
from simdbind import ArgumentError, DTypeError, SimdBindError
from simdbind import activation as act

Call = Callable[[Any], tuple[Callable[..., Any], dict[str, Any]]]


def f32(*shape: int) -> np.ndarray:
    return np.random.default_rng(38).uniform(-1, 1, shape).astype(np.float32)


def _indices(*shape: int) -> np.ndarray:
    return np.random.default_rng(39).integers(0, shape[-1], shape)


def _conv(lib: Any) -> simdbind.Convolution32f:
    return simdbind.Convolution32f((4, 6, 6), 4, 3, pad=1, weight=f32(4, 4, 3, 3), bias=f32(4), activation="prelu",
                                   params=f32(4), library=lib)


def _conv_forward(lib: Any) -> tuple[Callable[..., Any], dict[str, Any]]:
    conv = _conv(lib)
    return conv.forward, {"x": f32(4, 6, 6), "buffer": np.zeros(max(1, conv.external_buffer_size), np.float32)}


def _gather(lib: Any) -> simdbind.GatherElements:
    return simdbind.GatherElements(np.float32, np.int64, (4, 6), (4, 6), 1, library=lib)


#: One valid call per public callable that takes an array: (callable, keyword arguments) for a library.
VALID: dict[str, Call] = {
    "eltwise": lambda lib: (simdbind.eltwise, {"inputs": [f32(16), f32(16)], "op": "sum", "weights": f32(2)}),
    "unary": lambda lib: (simdbind.unary, {"x": f32(16), "op": "exp"}),
    "softmax": lambda lib: (simdbind.softmax, {"x": f32(4, 8)}),
    "lrn": lambda lib: (simdbind.lrn, {"x": f32(2, 5, 3, 3), "half": 1, "k": np.float32([1, 0.1, -0.75])}),
    "lrn_onnx": lambda lib: (simdbind.lrn_onnx, {"x": f32(2, 5, 3, 3), "size": 3}),
    "shuffle": lambda lib: (simdbind.shuffle, {"x0": f32(2, 3, 3), "x1": f32(4, 3, 3)}),
    "pooling_max": lambda lib: (simdbind.pooling_max, {"x": f32(2, 3, 6, 6), "kernel": 2, "stride": 2}),
    "pooling_average": lambda lib: (simdbind.pooling_average, {"x": f32(2, 3, 6, 6), "kernel": 2, "stride": 2,
                                                               "exclude_pad": True}),
    "gather_elements": lambda lib: (simdbind.gather_elements, {"data": f32(4, 6), "indices": _indices(4, 6),
                                                               "axis": 1}),
    "GatherElements": lambda lib: (simdbind.GatherElements, {
        "data_dtype": np.float32, "index_dtype": np.int64, "data_shape": (4, 6), "index_shape": (4, 6), "axis": 1,
        "index": _indices(4, 6)}),
    "GatherElements.forward": lambda lib: (_gather(lib).forward, {"data": f32(4, 6), "indices": _indices(4, 6)}),
    "inner_product": lambda lib: (simdbind.inner_product, {"x": f32(2, 5), "weight": f32(4, 5), "bias": f32(4)}),
    "inner_product_8i": lambda lib: (simdbind.inner_product_8i, {
        "src_u8": _indices(2, 6).astype(np.uint8), "weight_i8": _indices(3, 6).astype(np.int8)}),
    "InnerProduct32f": lambda lib: (simdbind.InnerProduct32f, {
        "M": 2, "N": 4, "K": 5, "weight": f32(5, 4), "bias": f32(4), "activation": "prelu", "params": f32(4)}),
    "InnerProduct32f.forward": lambda lib: (simdbind.InnerProduct32f(2, 4, 5, const_b=False, library=lib).forward,
                                            {"A": f32(2, 5), "B": f32(5, 4)}),
    "Convolution32f": lambda lib: (simdbind.Convolution32f, {
        "src_shape": (4, 6, 6), "out_channels": 4, "kernel": 3, "pad": 1, "weight": f32(4, 4, 3, 3),
        "bias": f32(4), "activation": "prelu", "params": f32(4)}),
    "Convolution32f.forward": _conv_forward,
    "conv2d": lambda lib: (simdbind.conv2d, {"x": f32(1, 4, 6, 6), "weight": f32(4, 4, 3, 3), "bias": f32(4),
                                             "pad": 1, "activation": "prelu", "params": f32(4)}),
    "convert_weight": lambda lib: (simdbind.convert_weight, {"weight": f32(4, 4, 3, 3), "source": "nchw",
                                                             "target": "nhwc"}),
    "activation.prelu": lambda lib: (act.prelu, {"slopes": f32(4)}),
    "activation.resolve": lambda lib: (act.resolve, {"activation": "prelu", "params": f32(4), "channels": 4}),
}
#: Public callables that take no array (their other arguments are checked in tests/test_arguments.py).
NO_ARRAYS = {
    "load", "default_library", "set_default_library", "bundled_path", "pooling_output_size", "Library",
    "Library.describe", "Library.function", "Library.has", "Library.set_isa", "Library.set_threads",
    "Library.use_isa", "GatherElements.close", "InnerProduct32f.close", "Convolution32f.close",
    "activation.identity", "activation.relu", "activation.leaky_relu", "activation.restrict_range",
    "activation.elu", "activation.hswish", "activation.mish", "activation.hard_sigmoid", "activation.swish",
    "activation.gelu",
    "activation.ActivationSpec",  # a record: its prelu slopes are checked where it is used (activation.resolve)
}


def public_callables() -> dict[str, Any]:
    """Every public function, class and public method of a class in simdbind.__all__, and simdbind.activation's
    functions and classes, by dotted name (errors and enums left out: they take no arrays)."""
    found: dict[str, Any] = {}

    def add(name: str, obj: Any) -> None:
        if inspect.isclass(obj):
            if issubclass(obj, (BaseException, enum.Enum)):
                return
            found[name] = obj
            for member, value in inspect.getmembers(obj, inspect.isfunction):  # inherited ones too
                if not member.startswith("_"):
                    found[f"{name}.{member}"] = value
        elif inspect.isfunction(obj):
            found[name] = obj

    for name in simdbind.__all__:
        add(name, getattr(simdbind, name))
    for name in act.__all__:
        add(f"activation.{name}", getattr(act, name))
    return found


def test_every_public_callable_is_covered():
    assert set(public_callables()) == set(VALID) | NO_ARRAYS


def test_every_array_parameter_of_a_covered_callable_gets_an_array():
    # Parameters typed as arrays must each be exercised (out is made from the result in the tests below).
    for name, make in VALID.items():
        function = public_callables()[name]
        _, kwargs = make(simdbind.default_library())
        for parameter in inspect.signature(function).parameters.values():
            typed = re.search(r"ArrayLike|ndarray|NDArray|FloatArray", str(parameter.annotation))
            if typed and parameter.name not in ("out",):
                assert parameter.name in kwargs, f"{name}: array parameter {parameter.name} is not exercised"


def _arrays(value: Any, name: str) -> list[tuple[str, tuple[Any, ...]]]:
    """(argument name, path) of every ndarray in a keyword value: itself, or each item of a list of them."""
    if isinstance(value, np.ndarray):
        return [(name, ())]
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, np.ndarray) for v in value):
        return [(f"{name}[{i}]", (i,)) for i in range(len(value))]
    return []


def _call(name: str, library: Any, **overrides: Any) -> Any:
    function, kwargs = VALID[name](library)
    if "library" in inspect.signature(function).parameters:
        kwargs["library"] = library
    return function(**{**kwargs, **overrides})


ARRAY_ARGUMENTS = [(name, argument, key, path) for name, make in VALID.items()
                   for key, value in make(simdbind.default_library())[1].items()
                   for argument, path in _arrays(value, key)]


def _replaced(value: Any, path: tuple[Any, ...], make: Callable[[np.ndarray], Any]) -> Any:
    if not path:
        return make(value)
    items = list(value)
    items[path[0]] = make(items[path[0]])
    return type(value)(items)


class _OwnArray(np.ndarray):
    """A subclass whose data is what its __array__ returns (zeros), not its buffer."""

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return np.zeros(self.shape, dtype or self.dtype)


SUBCLASSES = {
    "masked": lambda a: np.ma.masked_array(a, mask=np.arange(a.size).reshape(a.shape) % 2 == 0),
    "masked-nothing": lambda a: np.ma.masked_array(a),  # a mask of no element: still not a plain array
    "own __array__": lambda a: a.view(_OwnArray),
}


@pytest.fixture(autouse=True)
def _warnings_are_errors():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


@pytest.mark.parametrize("kind", SUBCLASSES)
@pytest.mark.parametrize("name,argument,key,path", ARRAY_ARGUMENTS,
                         ids=[f"{n}-{a}" for n, a, _, _ in ARRAY_ARGUMENTS])
def test_array_subclasses_whose_data_is_not_their_buffer_are_refused(bundled, name, argument, key, path, kind):
    _, kwargs = VALID[name](bundled)
    bad = _replaced(kwargs[key], path, SUBCLASSES[kind])
    with pytest.raises(DTypeError, match=re.escape(f"{argument}: must be a numpy.ndarray, ")):
        _call(name, bundled, **{key: bad})


OUTS = [name for name, make in VALID.items()
        if "out" in inspect.signature(make(simdbind.default_library())[0]).parameters]


@pytest.mark.parametrize("kind", ["masked", "own __array__"])
@pytest.mark.parametrize("name", OUTS)
def test_out_of_a_subclass_is_refused_and_left_unwritten(bundled, name, kind):
    expected = _call(name, bundled)
    results = expected if isinstance(expected, tuple) else (expected,)
    outs = tuple(SUBCLASSES[kind](np.full(r.shape, 7, r.dtype)) for r in results)
    with pytest.raises(DTypeError, match=r"out(\[0\])?: must be a numpy.ndarray, "):
        _call(name, bundled, out=outs if isinstance(expected, tuple) else outs[0])
    assert all((np.asarray(o) == 7).all() for o in outs)


@pytest.mark.parametrize("name", ["unary", "softmax", "pooling_max"])
def test_plain_subclasses_are_computed_on_their_data(bundled, name):
    # A subclass whose buffer is its data (np.memmap, a subclass adding attributes) is taken as the plain array.
    class Tagged(np.ndarray):
        pass

    _, kwargs = VALID[name](bundled)
    expected = _call(name, bundled)
    tagged = _call(name, bundled, x=kwargs["x"].view(Tagged))
    assert type(tagged) is np.ndarray
    np.testing.assert_array_equal(tagged, expected)


# -- values that do not fit the dtype: a typed error and no NumPy warning -----------------------------------------
def _element(value: Any, path: tuple[Any, ...]) -> Any:
    return value[path[0]] if path else value


FLOAT32_ARGUMENTS = [(name, argument, key, path) for name, argument, key, path in ARRAY_ARGUMENTS
                     if _element(VALID[name](simdbind.default_library())[1][key], path).dtype == np.float32]


@pytest.mark.parametrize("huge", [1e300, -1e39, 10 ** 40], ids=["1e300", "-1e39", "10**40"])
@pytest.mark.parametrize("name,argument,key,path", FLOAT32_ARGUMENTS,
                         ids=[f"{n}-{a}" for n, a, _, _ in FLOAT32_ARGUMENTS])
def test_float32_values_out_of_range_are_typed_errors_without_a_warning(bundled, name, argument, key, path, huge):
    _, kwargs = VALID[name](bundled)

    def listed(array: np.ndarray) -> Any:
        values = array.astype(np.float64).tolist()
        flat = values
        while isinstance(flat[0], list):
            flat = flat[0]
        flat[0] = huge
        return values

    with pytest.raises(SimdBindError, match=re.escape(f"{argument}: ")):  # buffer: "must be a numpy.ndarray"
        _call(name, bundled, **{key: _replaced(kwargs[key], path, listed)})


def test_float64_prelu_slopes_out_of_float32_range_are_a_typed_error_without_a_warning():
    with pytest.raises(DTypeError, match="slopes: every value must fit in float32"):
        act.prelu(np.array([1.0, 1e300]))


def test_an_activation_spec_made_by_hand_is_checked_where_it_is_used(bundled):
    spec = act.ActivationSpec(simdbind.Activation.PRELU, np.ma.masked_array(np.ones(4, np.float32)))
    with pytest.raises(DTypeError, match="activation.params: must be a numpy.ndarray, not a masked array"):
        simdbind.conv2d(f32(1, 4, 6, 6), f32(4, 4, 3, 3), activation=spec, pad=1, library=bundled)


def test_the_issue_examples_print_nothing_under_python_W_error():
    # The literal examples, in a fresh interpreter with every warning an error: only the typed errors come out.
    code = """
import numpy as np, simdbind
lib = simdbind.load("bundled")
x = np.ones((1, 5, 3, 3), np.float32)
for call in (lambda: simdbind.unary([1e300], "exp"), lambda: simdbind.lrn(x, 2, (1e39, 0.1, -0.75)),
             lambda: lib.set_threads(2 ** 64), lambda: simdbind.unary(np.ma.masked_array([1.0], [True]), "abs")):
    try:
        call()
    except simdbind.SimdBindError as error:
        print(type(error).__name__)
"""
    result = subprocess.run([sys.executable, "-W", "error", "-c", code], capture_output=True, text=True, timeout=120)
    assert result.stderr == ""
    assert result.stdout.split() == ["DTypeError", "DTypeError", "ArgumentError", "DTypeError"]


# -- set_threads: the integer rule of every size ------------------------------------------------------------------
@pytest.mark.parametrize("bad", [2 ** 64, 2 ** 63, -(2 ** 64), 0, True, 1.5, "2", None])
def test_set_threads_takes_the_integer_rule_of_every_size(bundled, bad):
    before = bundled.threads
    with pytest.raises(ArgumentError, match="count: must be"):
        bundled.set_threads(bad)
    assert bundled.threads == before


def test_set_threads_takes_numpy_integers_like_every_size(bundled):
    before = bundled.threads
    try:
        assert bundled.set_threads(np.int64(1)) == 1
        assert isinstance(bundled.set_threads(np.uint64(2 ** 63 - 1)), int)  # clamped by the library to the CPUs
    finally:
        bundled.set_threads(before)


def test_simdbind_errors_are_the_only_exceptions_of_these_traps(bundled):
    # The untyped ones that came out before: OverflowError (set_threads), TypeError (masked arrays).
    for call in (lambda: bundled.set_threads(2 ** 64), lambda: simdbind.unary([1e300], "exp", library=bundled)):
        with pytest.raises(SimdBindError):
            call()
