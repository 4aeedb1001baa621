"""The other engines' adapters of the elementwise family (eltwise, unary, softmax, softmax16b, lrn, shuffle), one
class per engine: :class:`Torch`, :class:`OnnxRuntime`, :class:`OpenVINO`, :class:`Ncnn`. Each class's docstring
gives its mappings and what the engine cannot express; each adapter is registered on its engine's implementation by
:func:`~simdbind.conformance.engines.adapter` (prepared calls by :func:`~simdbind.conformance.engines.preparer`) and
imports its engine when it runs, so this module imports where no engine is installed. The engines' shared plumbing
is in ``simdbind/conformance/engines/<engine>/``.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Hashable

import numpy as np

from simdbind.conformance import Case, Unsupported
from simdbind.conformance.engines import adapter, fallback, preparer
from simdbind.conformance.engines.ncnn._graph import Graph, per_image
from simdbind.conformance.engines.onnxruntime.model import ValueSpec, model, node, session
from simdbind.conformance.engines.openvino._graph import constant
from simdbind.conformance.engines.openvino._graph import run as openvino_run
from simdbind.conformance.engines.torch import as_numpy, tensor
from simdbind.conformance.tolerance import Tolerance


def _edge(case: Case) -> None:
    """Every engine skips the edge group of these functions: it pins Simd's own implementation-defined results."""
    if case.group == "edge":
        raise Unsupported("edge group: Simd's implementation-defined results (NaN, Inf, ties, signed zeros)")


def _bf16_to_float(bits: np.ndarray) -> np.ndarray:
    return (np.ascontiguousarray(bits).view(np.uint16).astype(np.uint32) << 16).view(np.float32)


def _torch_unary_tolerance(case: Case) -> Tolerance | None:
    """torch's unary tolerance: sqrt held to 1 ulp (see :class:`Torch`), the function's own otherwise."""
    from simdbind.conformance.model import REGISTRY

    if case.params["op"] == "sqrt":
        return Tolerance(max_ulp=1, why="torch's CPU float32 sqrt is not correctly rounded (1 ulp)")
    tolerance: Tolerance | None = REGISTRY["unary"].tolerance(case)
    return tolerance


# -- PyTorch ----------------------------------------------------------------------------------------------------------
class Torch:
    """PyTorch adapters of the elementwise family: eltwise, unary operations, softmax (float32 and bf16) and LRN.

    Mappings:

    * eltwise: product folds ``torch.mul``, max/min fold ``torch.maximum``/``torch.minimum`` from the first two
      inputs (the order of the fold does not matter for finite values), sum is ``sum_i w_i * x_i`` in float32 with
      torch's own rounding. NaN differs by definition: torch.maximum/minimum propagate NaN, Simd's ``a > b ? a : b``
      keeps the later operand, so the cases with NaN are not expressible and are skipped.
    * unary: abs/ceil/floor/neg/exp/log/erf/tanh/sin/cos/sqrt/rsqrt/sign with torch's functions of the same name,
      rcp -> reciprocal, round -> round (ties to even: the main cases have no ties), zero -> zeros_like,
      not -> bitwise_not of the int32 bits. The edge group (NaN, Inf, ties, signed zeros) pins Simd's own
      implementation-defined results and is skipped. torch's float32 ``sqrt`` on CPU is not correctly rounded (found
      by this adapter: 1 ulp off on about one element in six, torch 2.13 AVX2), so sqrt is held to 1 ulp here, not
      to the contract's exact IEEE result; every other operation keeps the function's tolerance.
    * softmax: ``torch.softmax(x, dim=1)`` on (outer, count, inner). bf16: widened to float32 exactly, softmax in
      float32, rounded to bf16 by ``Tensor.to(torch.bfloat16)`` (round to nearest even).
    * LRN: ``F.local_response_norm(x, size=2*half+1, alpha=k1*size, beta=-k2, k=k0)`` on NCHW (NHWC is permuted):
      torch divides the window sum by size and raises to -beta, Simd multiplies by (k0 + k1*sum)^k2 with no 1/size,
      so alpha = k1*size and beta = -k2 give the same function.

    Prepared calls (what ``simdbind bench`` times): the tensors are made once, outputs preallocated where torch takes
    ``out=``, and each call is the torch function alone; the edge group, unary operations without a torch function
    and eltwise's special values run the adapter.
    """

    @staticmethod
    @functools.cache
    def _unary() -> dict[str, Callable[..., Any]]:
        """The unary operations with a torch function of the same meaning (each takes out= as well)."""
        import torch

        return {"abs": torch.abs, "ceil": torch.ceil, "floor": torch.floor, "neg": torch.neg, "exp": torch.exp,
                "log": torch.log, "erf": torch.erf, "tanh": torch.tanh, "sin": torch.sin, "cos": torch.cos,
                "sqrt": torch.sqrt, "rsqrt": torch.rsqrt, "sign": torch.sign, "rcp": torch.reciprocal,
                "round": torch.round, "zero": torch.zeros_like}

    @staticmethod
    @adapter("torch", "unary", tolerance=_torch_unary_tolerance)
    def unary(case: Case, inputs: dict[str, Any]) -> np.ndarray:
        import torch

        _edge(case)
        op = case.params["op"]
        x = torch.from_numpy(np.ascontiguousarray(inputs["x"], np.float32))
        if op == "not":  # compared as bits by the case
            return as_numpy(torch.bitwise_not(x.view(torch.int32))).view(np.uint32)
        if op not in Torch._unary():
            raise Unsupported(f"torch has no {op} operation")
        return as_numpy(Torch._unary()[op](x))

    @staticmethod
    @adapter("torch", "softmax")
    def softmax(case: Case, inputs: dict[str, Any]) -> np.ndarray:
        import torch

        _edge(case)
        return as_numpy(torch.softmax(torch.from_numpy(np.ascontiguousarray(inputs["x"], np.float32)), dim=1))

    @staticmethod
    @adapter("torch", "softmax16b")
    def softmax16b(case: Case, inputs: dict[str, Any]) -> np.ndarray:
        import torch

        _edge(case)
        y = torch.softmax(torch.from_numpy(_bf16_to_float(inputs["x"])), dim=1).to(torch.bfloat16)
        return _bf16_to_float(as_numpy(y.view(torch.int16)).view(np.uint16))

    @staticmethod
    @adapter("torch", "lrn")
    def lrn(case: Case, inputs: dict[str, Any]) -> np.ndarray:
        import torch
        import torch.nn.functional as F

        _edge(case)
        x = np.asarray(inputs["x"], np.float32)
        k0, k1, k2 = (float(v) for v in np.asarray(inputs["k"], np.float32))
        size = 2 * case.params["half"] + 1
        t = torch.from_numpy(np.ascontiguousarray(x))
        batched = t.dim() == 4
        if not batched:
            t = t.unsqueeze(0)
        if case.layout == "nhwc":
            t = t.permute(0, 3, 1, 2)
        y = F.local_response_norm(t.contiguous(), size, alpha=k1 * size, beta=-k2, k=k0)
        if case.layout == "nhwc":
            y = y.permute(0, 2, 3, 1)
        if not batched:
            y = y.squeeze(0)
        return as_numpy(y.contiguous())

    @staticmethod
    @adapter("torch", "eltwise")
    def eltwise(case: Case, inputs: dict[str, Any]) -> np.ndarray:
        import torch

        op = case.params["op"]
        arrays = [torch.from_numpy(np.ascontiguousarray(a)) for a in inputs["arrays"]]
        if op in ("max", "min") and any(bool(torch.isnan(a).any()) for a in arrays):
            raise Unsupported("NaN: torch.maximum/minimum propagate NaN, Simd's a > b ? a : b fold keeps the later "
                              "operand")
        if op == "sum":
            weights = [float(w) for w in np.asarray(inputs["weights"], np.float32)]
            result = arrays[0] * weights[0]
            for a, w in zip(arrays[1:], weights[1:]):
                result = torch.add(result, a, alpha=w)
        else:
            step = {"product": torch.mul, "max": torch.maximum, "min": torch.minimum}[op]
            result = step(arrays[0], arrays[1])
            for a in arrays[2:]:
                result = step(result, a)
        return as_numpy(result).astype(np.float32, copy=False)

    @staticmethod
    @preparer("torch", "unary")
    def prepare_unary(case: Case, inputs: dict[str, Any]) -> Callable[[], Any]:
        import torch

        op = case.params["op"]
        if case.group == "edge" or op not in Torch._unary():
            return fallback("torch", case, inputs)
        x = torch.from_numpy(np.ascontiguousarray(inputs["x"], np.float32))
        out = torch.empty_like(x)
        if op == "zero":
            return lambda: out.zero_()
        fn = Torch._unary()[op]
        return lambda: fn(x, out=out)

    @staticmethod
    @preparer("torch", "softmax")
    def prepare_softmax(case: Case, inputs: dict[str, Any]) -> Callable[[], Any]:
        import torch

        x = torch.from_numpy(np.ascontiguousarray(inputs["x"], np.float32))
        out = torch.empty_like(x)
        return lambda: torch.softmax(x, dim=1, out=out)

    @staticmethod
    @preparer("torch", "eltwise")
    def prepare_eltwise(case: Case, inputs: dict[str, Any]) -> Callable[[], Any]:
        import torch

        op = case.params["op"]
        if case.params["special"]:
            return fallback("torch", case, inputs)
        a = [torch.from_numpy(np.ascontiguousarray(x)) for x in inputs["arrays"]]
        out = torch.empty_like(a[0])
        if op == "sum":
            w = [float(v) for v in np.asarray(inputs["weights"], np.float32)]

            def weighted_sum() -> Any:
                torch.mul(a[0], w[0], out=out)
                for x, weight in zip(a[1:], w[1:]):
                    torch.add(out, x, alpha=weight, out=out)
                return out

            return weighted_sum
        step = {"product": torch.mul, "max": torch.maximum, "min": torch.minimum}[op]

        def fold() -> Any:
            step(a[0], a[1], out=out)
            for x in a[2:]:
                step(out, x, out=out)
            return out

        return fold

    @staticmethod
    @preparer("torch", "lrn")
    def prepare_lrn(case: Case, inputs: dict[str, Any]) -> Callable[[], Any]:
        import torch.nn.functional as F

        k0, k1, k2 = (float(v) for v in np.asarray(inputs["k"], np.float32))
        size = 2 * case.params["half"] + 1
        t = tensor(np.asarray(inputs["x"], np.float32), case.layout)
        t = t if t.dim() == 4 else t.unsqueeze(0)
        return lambda: F.local_response_norm(t, size, alpha=k1 * size, beta=-k2, k=k0)


# -- ONNX Runtime -----------------------------------------------------------------------------------------------------
class OnnxRuntime:
    """ONNX Runtime adapters of the elementwise family (eltwise, unary, softmax, LRN), small models.

    Mappings: eltwise product is a chain of ``Mul``, max/min the variadic ``Max``/``Min``, sum ``Mul`` by each
    weight (a float32 graph input) then the variadic ``Sum`` (NaN differs by definition: ONNX Max/Min propagate NaN,
    Simd's ``a > b ? a : b`` keeps the later operand, so cases with NaN are skipped); unary ops to the ONNX operator
    of the same meaning (rcp -> Reciprocal; round -> Round, ties to even, the main cases have no ties; rsqrt, zero
    and the bitwise not have no single operator and are skipped); softmax -> ``Softmax(axis=1)`` (opset 13: one
    axis) on (outer, count, inner); LRN -> ``LRN(size=2*half+1, alpha=k1*size, beta=-k2, bias=k0)`` on NCHW (NHWC
    is transposed around it; ONNX divides the window sum by size, Simd does not). The edge group (Simd's
    implementation-defined NaN/Inf/tie results) is skipped.

    No prepared calls of its own: ``run`` is one ``session.run`` on a cached session, which the benchmark rows time.
    """

    _UNARY = {"abs": "Abs", "ceil": "Ceil", "floor": "Floor", "neg": "Neg", "exp": "Exp", "log": "Log", "erf": "Erf",
              "tanh": "Tanh", "sin": "Sin", "cos": "Cos", "sqrt": "Sqrt", "rcp": "Reciprocal", "round": "Round",
              "sign": "Sign"}

    @staticmethod
    def _run(key: Hashable, build: Callable[[], bytes], **feeds: np.ndarray) -> np.ndarray:
        y: np.ndarray
        (y,) = session(key, build).run(None, feeds)
        return y

    @staticmethod
    @adapter("onnxruntime", "unary")
    def unary(case: Case, inputs: dict[str, Any]) -> np.ndarray:
        _edge(case)
        op = case.params["op"]
        if op not in OnnxRuntime._UNARY:
            raise Unsupported(f"ONNX has no single operator for {op}")
        build = lambda: model([node(OnnxRuntime._UNARY[op], ["x"], ["y"])], [("x", np.float32)],  # noqa: E731
                              [("y", np.float32)])
        return OnnxRuntime._run(("unary", op), build, x=np.ascontiguousarray(inputs["x"], np.float32))

    @staticmethod
    @adapter("onnxruntime", "softmax")
    def softmax(case: Case, inputs: dict[str, Any]) -> np.ndarray:
        _edge(case)
        build = lambda: model([node("Softmax", ["x"], ["y"], axis=1)], [("x", np.float32, 3)],  # noqa: E731
                              [("y", np.float32, 3)])
        return OnnxRuntime._run(("softmax",), build, x=np.ascontiguousarray(inputs["x"], np.float32))

    @staticmethod
    @adapter("onnxruntime", "lrn")
    def lrn(case: Case, inputs: dict[str, Any]) -> np.ndarray:
        _edge(case)
        x = np.asarray(inputs["x"], np.float32)
        k0, k1, k2 = (float(v) for v in np.asarray(inputs["k"], np.float32))
        size = 2 * case.params["half"] + 1
        batched = x.ndim == 4
        t = x if batched else x[None]
        if case.layout == "nhwc":
            t = t.transpose(0, 3, 1, 2)
        build = lambda: model(  # noqa: E731
            [node("LRN", ["x"], ["y"], size=size, alpha=k1 * size, beta=-k2, bias=k0)],
            [("x", np.float32, 4)], [("y", np.float32, 4)])
        y = OnnxRuntime._run(("lrn", size, k0, k1, k2), build, x=np.ascontiguousarray(t))
        if case.layout == "nhwc":
            y = y.transpose(0, 2, 3, 1)
        return np.ascontiguousarray(y if batched else y[0])

    @staticmethod
    def _build(op: str, count: int) -> bytes:
        xs = [f"x{i}" for i in range(count)]
        inputs: list[ValueSpec] = [(x, np.float32) for x in xs]
        if op == "product":
            nodes, previous = [], xs[0]
            for i, x in enumerate(xs[1:], 1):
                out = "y" if i == count - 1 else f"p{i}"
                nodes.append(node("Mul", [previous, x], [out]))
                previous = out
        elif op == "sum":
            inputs += [(f"w{i}", np.float32, []) for i in range(count)]
            nodes = [node("Mul", [x, f"w{i}"], [f"t{i}"]) for i, x in enumerate(xs)]
            nodes.append(node("Sum", [f"t{i}" for i in range(count)], ["y"]))
        else:
            nodes = [node({"max": "Max", "min": "Min"}[op], xs, ["y"])]
        return model(nodes, inputs, [("y", np.float32)])

    @staticmethod
    @adapter("onnxruntime", "eltwise")
    def eltwise(case: Case, inputs: dict[str, Any]) -> np.ndarray:
        op, arrays = case.params["op"], inputs["arrays"]
        if op in ("max", "min") and any(np.isnan(a).any() for a in arrays):
            raise Unsupported("NaN: ONNX Max/Min propagate NaN, Simd's a > b ? a : b fold keeps the later operand")
        sess = session(("eltwise", op, len(arrays)), lambda: OnnxRuntime._build(op, len(arrays)))
        feeds = {f"x{i}": np.ascontiguousarray(a, np.float32) for i, a in enumerate(arrays)}
        if op == "sum":
            feeds.update({f"w{i}": np.asarray(w, np.float32) for i, w in enumerate(inputs["weights"])})
        (result,) = sess.run(None, feeds)
        return np.asarray(result, np.float32)


# -- OpenVINO ---------------------------------------------------------------------------------------------------------
class OpenVINO:
    """OpenVINO adapters of the elementwise family.

    * eltwise: product and max/min fold ``Multiply``/``Maximum``/``Minimum`` over the inputs in order; sum is
      ``Multiply`` by each weight (a scalar parameter) then an ``Add`` chain. NaN differs by definition (OpenVINO's
      Maximum/Minimum propagate NaN, Simd's ``a > b ? a : b`` keeps the later operand), so cases with NaN are
      skipped.
    * unary: the op of the same meaning (neg -> Negative, rcp -> Divide(1, x), rsqrt -> Divide(1, Sqrt(x)),
      round -> Round(half_away_from_zero), C's round as Simd's, not -> BitwiseNot of the int32 bits); zero has no
      operation to check. The edge group (Simd's NaN/Inf/tie/signed-zero results) is skipped.
    * softmax: ``SoftMax(axis=1)`` on (outer, count, inner); softmax16b: bf16 widened to float32 exactly, SoftMax,
      then OpenVINO's own ``Convert`` to bf16.
    * lrn: ``LRN(axes=[1], size=2*half+1, alpha=k1*size, beta=-k2, bias=k0)`` on NCHW (NHWC transposed around it):
      OpenVINO divides alpha by size, Simd does not.
    * shuffle: ``Concat`` then ``ShuffleChannels`` and ``Split`` (type 0: group C/2, halves; type 1: group 2, split
      at the first input's channel count).

    Prepared calls: every adapter's, made by ``engines/openvino/prepare.py``.
    """

    @staticmethod
    @functools.cache
    def _unary() -> dict[str, Callable[[Any], Any]]:
        """The unary operations as OpenVINO ops of the same meaning."""
        from openvino import opset15 as ops

        return {"abs": ops.absolute, "ceil": ops.ceiling, "floor": ops.floor, "neg": ops.negative, "exp": ops.exp,
                "log": ops.log, "erf": ops.erf, "tanh": ops.tanh, "sin": ops.sin, "cos": ops.cos, "sqrt": ops.sqrt,
                "sign": ops.sign, "rcp": lambda x: ops.divide(constant(1.0), x),
                "rsqrt": lambda x: ops.divide(constant(1.0), ops.sqrt(x)),
                "round": lambda x: ops.round(x, "half_away_from_zero")}

    @staticmethod
    @adapter("openvino", "eltwise")
    def eltwise(case: Case, inputs: dict[str, Any]) -> np.ndarray:
        from openvino import opset15 as ops

        op, arrays = case.params["op"], [np.asarray(a, np.float32) for a in inputs["arrays"]]
        if op in ("max", "min") and any(np.isnan(a).any() for a in arrays):
            raise Unsupported("NaN: OpenVINO Maximum/Minimum propagate NaN, Simd's a > b ? a : b fold keeps the "
                              "later operand")
        count = len(arrays)

        def build(*xs: Any) -> list[Any]:
            if op == "sum":
                terms = [ops.multiply(x, w) for x, w in zip(xs[:count], xs[count:])]
                step, values = ops.add, terms
            else:
                step, values = {"product": ops.multiply, "max": ops.maximum, "min": ops.minimum}[op], list(xs)
            result = values[0]
            for value in values[1:]:
                result = step(result, value)
            return [result]

        weights = [np.asarray(w, np.float32) for w in inputs["weights"]] if op == "sum" else []
        return openvino_run(("eltwise", op), build, *arrays, *weights)[0]

    @staticmethod
    @adapter("openvino", "unary")
    def unary(case: Case, inputs: dict[str, Any]) -> np.ndarray:
        from openvino import opset15 as ops

        _edge(case)
        op = case.params["op"]
        x = np.asarray(inputs["x"], np.float32)
        if op == "not":  # compared as bits by the case
            return openvino_run(("unary", op), lambda t: [ops.bitwise_not(t)], x.view(np.int32))[0].view(np.uint32)
        if op not in OpenVINO._unary():
            raise Unsupported(f"OpenVINO has no operation for {op} (a constant output checks nothing of the engine)")
        return openvino_run(("unary", op), lambda t: [OpenVINO._unary()[op](t)], x)[0]

    @staticmethod
    @adapter("openvino", "softmax")
    def softmax(case: Case, inputs: dict[str, Any]) -> np.ndarray:
        from openvino import opset15 as ops

        _edge(case)
        return openvino_run(("softmax",), lambda x: [ops.softmax(x, 1)], np.asarray(inputs["x"], np.float32))[0]

    @staticmethod
    @adapter("openvino", "softmax16b")
    def softmax16b(case: Case, inputs: dict[str, Any]) -> np.ndarray:
        from openvino import opset15 as ops

        _edge(case)
        (y,) = openvino_run(("softmax16b",), lambda x: [ops.convert(ops.softmax(x, 1), "bf16")],
                            _bf16_to_float(inputs["x"]))
        return _bf16_to_float(y.view(np.uint16))

    @staticmethod
    @adapter("openvino", "lrn")
    def lrn(case: Case, inputs: dict[str, Any]) -> np.ndarray:
        from openvino import opset15 as ops

        x = np.asarray(inputs["x"], np.float32)
        k0, k1, k2 = (float(v) for v in np.asarray(inputs["k"], np.float32))
        size = 2 * case.params["half"] + 1
        batched = x.ndim == 4
        t = x if batched else x[None]
        if case.layout == "nhwc":
            t = t.transpose(0, 3, 1, 2)
        build = lambda v: [ops.lrn(v, constant([1], np.int64), alpha=k1 * size, beta=-k2, bias=k0,  # noqa: E731
                                   size=size)]
        y = openvino_run(("lrn", size, k0, k1, k2), build, t)[0]
        if case.layout == "nhwc":
            y = y.transpose(0, 2, 3, 1)
        return np.ascontiguousarray(y if batched else y[0])

    @staticmethod
    @adapter("openvino", "shuffle")
    def shuffle(case: Case, inputs: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
        from openvino import opset15 as ops

        x0, x1 = (np.asarray(inputs[k], np.float32) for k in ("x0", "x1"))
        axis = x0.ndim - 3 if case.layout == "nchw" else x0.ndim - 1
        total = x0.shape[axis] + x1.shape[axis]
        if case.params["type"] == 0:
            group, split = total // 2, [total // 2, total // 2]
        else:
            group, split = 2, [case.params["channels0"], total - case.params["channels0"]]

        def build(a: Any, b: Any) -> list[Any]:
            mixed = ops.shuffle_channels(ops.concat([a, b], axis), axis, group)
            parts = ops.variadic_split(mixed, constant(axis, np.int64), constant(split, np.int64))
            return [parts.output(0), parts.output(1)]

        y0, y1 = openvino_run(("shuffle", axis, group, tuple(split)), build, x0, x1)
        return y0, y1


def _ncnn_unary_tolerance(case: Case) -> Tolerance | None:
    """ncnn's unary tolerance: rcp held to 1 ulp (see :class:`Ncnn`), the function's own otherwise."""
    if case.params["op"] == "rcp":
        return Tolerance(max_ulp=1, why="ncnn's x86 RECIPROCAL is not correctly rounded: 1 ulp on about a third of "
                                        "the elements (measured, ncnn 1.0.20261020)")
    return None


# -- ncnn -------------------------------------------------------------------------------------------------------------
class Ncnn:
    """ncnn adapters of the elementwise family.

    * eltwise: ``Eltwise`` PROD, SUM (coefficients = the weights) and MAX; min folds ``BinaryOp`` MIN. NaN differs by
      definition (ncnn's max/min keep whichever operand its comparison picks, Simd's ``a > b ? a : b`` the later
      one), so cases with NaN are skipped.
    * unary: ``UnaryOp`` ABS, NEG, FLOOR, CEIL, SQRT, RSQ, EXP, LOG, SIN, COS, RECIPROCAL, TANH, ROUND; ncnn has no
      erf, sign, bitwise not or zero layer. RECIPROCAL is held to 1 ulp instead of the exact quotient (it is not
      correctly rounded on x86). The edge group (Simd's NaN/Inf/tie/signed-zero results) is skipped.
    * softmax: ``Softmax(axis=1, fixbug0=1)`` on (outer, count, inner) as ncnn's (c, h, w); softmax16b: bf16 widened
      to float32 exactly, Softmax, then ncnn's own ``cast_float32_to_bfloat16``.
    * lrn: ``LRN(ACROSS_CHANNELS, local_size=2*half+1, alpha=k1*size, beta=-k2, bias=k0)`` (ncnn divides alpha by
      the size, Simd does not); one image at a time, NHWC transposed around it.
    * shuffle: ``Concat`` then ``ShuffleChannel`` and ``Slice`` (type 0: group C/2, halves; type 1: group 2, split at
      the first input's channel count), one image at a time.

    Prepared calls: every adapter's, made by ``engines/ncnn/prepare.py``.
    """

    _UNARY = {"abs": 0, "neg": 1, "floor": 2, "ceil": 3, "sqrt": 5, "rsqrt": 6, "exp": 7, "log": 8, "sin": 9,
              "cos": 10, "rcp": 15, "tanh": 16, "round": 18}

    @staticmethod
    @adapter("ncnn", "eltwise")
    def eltwise(case: Case, inputs: dict[str, Any]) -> np.ndarray:
        op, arrays = case.params["op"], [np.asarray(a, np.float32) for a in inputs["arrays"]]
        if op in ("max", "min") and any(np.isnan(a).any() for a in arrays):
            raise Unsupported("NaN: ncnn's max/min keep the operand its comparison picks, Simd's a > b ? a : b fold "
                              "keeps the later operand")
        graph = Graph()
        xs = [graph.input() for _ in arrays]
        if op == "min":
            y = xs[0]
            for x in xs[1:]:
                y = graph.layer("BinaryOp", [y, x], {0: 5})
        else:
            params: dict[int, Any] = {0: {"product": 0, "sum": 1, "max": 2}[op]}
            if op == "sum":
                params[1] = [float(w) for w in np.asarray(inputs["weights"], np.float32)]
            y = graph.layer("Eltwise", xs, params)
        return graph.run(dict(zip(xs, arrays)), [y])[0].reshape(arrays[0].shape)

    @staticmethod
    @adapter("ncnn", "unary", tolerance=_ncnn_unary_tolerance)
    def unary(case: Case, inputs: dict[str, Any]) -> np.ndarray:
        _edge(case)
        op = case.params["op"]
        if op not in Ncnn._UNARY:
            raise Unsupported(f"ncnn has no layer for {op}")
        x = np.asarray(inputs["x"], np.float32)
        graph = Graph()
        source = graph.input()
        return graph.run({source: x}, [graph.layer("UnaryOp", [source], {0: Ncnn._UNARY[op]})])[0].reshape(x.shape)

    @staticmethod
    def _softmax(x: np.ndarray) -> np.ndarray:
        graph = Graph()
        source = graph.input()
        return graph.run({source: x}, [graph.layer("Softmax", [source], {0: 1, 1: 1})])[0].reshape(x.shape)

    @staticmethod
    @adapter("ncnn", "softmax")
    def softmax(case: Case, inputs: dict[str, Any]) -> np.ndarray:
        _edge(case)
        return Ncnn._softmax(np.asarray(inputs["x"], np.float32))

    @staticmethod
    @adapter("ncnn", "softmax16b")
    def softmax16b(case: Case, inputs: dict[str, Any]) -> np.ndarray:
        import ncnn

        _edge(case)
        bits = np.ascontiguousarray(inputs["x"]).view(np.uint16)
        y = Ncnn._softmax((bits.astype(np.uint32) << 16).view(np.float32))
        rounded = np.array(ncnn.cast_float32_to_bfloat16(ncnn.Mat(y)), copy=True).view(np.uint16).reshape(y.shape)
        return (rounded.astype(np.uint32) << 16).view(np.float32)

    @staticmethod
    @adapter("ncnn", "lrn")
    def lrn(case: Case, inputs: dict[str, Any]) -> np.ndarray:
        k0, k1, k2 = (float(v) for v in np.asarray(inputs["k"], np.float32))
        size = 2 * case.params["half"] + 1
        graph = Graph()
        source = graph.input()
        y = graph.layer("LRN", [source], {0: 0, 1: size, 2: k1 * size, 3: -k2, 4: k0})
        run = graph.runner()
        return per_image(np.asarray(inputs["x"], np.float32), case.layout,
                         lambda image: run({source: image}, [y])[0])

    @staticmethod
    @adapter("ncnn", "shuffle")
    def shuffle(case: Case, inputs: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
        x0, x1 = (np.asarray(inputs[k], np.float32) for k in ("x0", "x1"))
        axis = x0.ndim - 3 if case.layout == "nchw" else x0.ndim - 1
        c0, c1 = x0.shape[axis], x1.shape[axis]
        if case.params["type"] == 0:
            group, first = (c0 + c1) // 2, (c0 + c1) // 2
        else:
            group, first = 2, case.params["channels0"]
        if 0 in (c0, c1, first, c0 + c1 - first):
            raise Unsupported("an empty channel block: ncnn's Slice refuses a zero-sized slice, and a zero-sized "
                              "input Mat kills the process")
        graph = Graph()
        a, b = graph.input(), graph.input()
        mixed = graph.layer("ShuffleChannel", [graph.layer("Concat", [a, b], {0: 0})], {0: group})
        top0, top1 = graph.layers("Slice", [mixed], {0: [first, -233], 1: 0}, tops=2)
        run = graph.runner()
        to_chw: Callable[[np.ndarray], np.ndarray] = (lambda t: t) if case.layout == "nchw" else \
            (lambda t: np.moveaxis(t, -1, -3))
        from_chw: Callable[[np.ndarray], np.ndarray] = (lambda t: t) if case.layout == "nchw" else \
            (lambda t: np.moveaxis(t, -3, -1))
        images0, images1 = to_chw(x0), to_chw(x1)
        if x0.ndim == 3:
            images0, images1 = images0[None], images1[None]
        outs = [run({a: np.ascontiguousarray(i0), b: np.ascontiguousarray(i1)}, [top0, top1])
                for i0, i1 in zip(images0, images1)]
        y0, y1 = (np.stack([o[k] for o in outs]) for k in (0, 1))
        if x0.ndim == 3:
            y0, y1 = y0[0], y1[0]
        return np.ascontiguousarray(from_chw(y0)), np.ascontiguousarray(from_chw(y1))
