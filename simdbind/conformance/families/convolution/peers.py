"""The other engines' adapters of the convolution family (convolution32f), one class per engine: :class:`Torch`,
:class:`OnnxRuntime`, :class:`OpenVINO`, :class:`Ncnn`. Each class's docstring gives its mapping and what the engine
cannot express; each adapter is registered on its engine's implementation by
:func:`~simdbind.conformance.engines.adapter` (prepared calls by :func:`~simdbind.conformance.engines.preparer`) and
imports its engine when it runs, so this module imports where no engine is installed. The engines' shared plumbing,
the activations included, is in ``simdbind/conformance/engines/<engine>/``.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np

from simdbind.conformance import Case
from simdbind.conformance.engines import adapter, preparer
from simdbind.conformance.engines.ncnn._graph import Graph, per_image
from simdbind.conformance.engines.ncnn._graph import activation as ncnn_activation
from simdbind.conformance.engines.onnxruntime.activation import activation_nodes
from simdbind.conformance.engines.onnxruntime.model import model, node, session
from simdbind.conformance.engines.openvino._graph import activation as openvino_activation
from simdbind.conformance.engines.openvino._graph import params_key
from simdbind.conformance.engines.openvino._graph import run as openvino_run
from simdbind.conformance.engines.torch import as_numpy, tensor
from simdbind.conformance.engines.torch.activation import activate


def _every_call(convolution: Callable[[Case, dict[str, Any]], np.ndarray]) -> Callable[[Case, dict[str, Any]], Any]:
    """The adapter run once per Forward call of the case (``calls``, cases.py), each result checked as a Simd
    context's are."""
    @functools.wraps(convolution)
    def every_call(case: Case, inputs: dict[str, Any]) -> Any:
        results = tuple(convolution(case, inputs) for _ in range(case.params.get("calls", 1)))
        return results[0] if len(results) == 1 else results
    return every_call


def _groups(p: dict[str, Any]) -> int:
    """The convolution's group count (case parameter "groups"; "group" in early case modules)."""
    return int(p["groups"] if "groups" in p else p["group"])


# -- PyTorch ----------------------------------------------------------------------------------------------------------
class Torch:
    """PyTorch adapter of Convolution32f: ``act(F.conv2d(F.pad(src, pads), weight, bias, stride, 0, dilation,
    groups))`` on NCHW.

    Mapping: NHWC sources (N, H, W, C) are permuted to NCHW and HWIO weights (kY, kX, C/group, dstC) to OIHW; the
    pads (top, left, bottom, right) are applied with ``F.pad`` (zeros, asymmetric allowed), so torch's own padding
    is 0; prelu slopes run along the channel dimension; the other activations use torch's functions
    (``engines/torch/activation.py``).

    Prepared call (what ``simdbind bench`` times): the tensors are made once (NHWC as ``channels_last`` tensors, as a
    PyTorch user holds them; symmetric pads as ``F.conv2d``'s own padding) and each call is the convolution and the
    activation alone.
    """

    @staticmethod
    @adapter("torch", "convolution32f")
    @_every_call
    def convolution32f(case: Case, inputs: dict[str, Any]) -> np.ndarray:
        import torch
        import torch.nn.functional as F

        p = case.params
        src = torch.from_numpy(np.ascontiguousarray(inputs["src"], np.float32))
        weight = torch.from_numpy(np.ascontiguousarray(inputs["weight"], np.float32))
        if case.layout == "nhwc":
            src = src.permute(0, 3, 1, 2)
            weight = weight.permute(3, 2, 0, 1)
        top, left, bottom, right = p["pad"]
        src = F.pad(src.contiguous(), (left, right, top, bottom))
        bias = torch.from_numpy(np.ascontiguousarray(inputs["bias"], np.float32))
        y = F.conv2d(src, weight.contiguous(), bias, tuple(p["stride"]), 0, tuple(p["dilation"]), _groups(p))
        y = activate(y, p["activation"], inputs["params"], channel_dim=1)
        if case.layout == "nhwc":
            y = y.permute(0, 2, 3, 1)
        return as_numpy(y.contiguous())

    @staticmethod
    @preparer("torch", "convolution32f")
    def prepare_convolution32f(case: Case, inputs: dict[str, Any]) -> Callable[[], Any]:
        import torch
        import torch.nn.functional as F

        p = case.params
        src = tensor(np.asarray(inputs["src"], np.float32), case.layout)
        weight = torch.from_numpy(np.ascontiguousarray(inputs["weight"], np.float32))
        if case.layout == "nhwc":  # HWIO -> OIHW, channels_last like the source
            weight = weight.permute(3, 2, 0, 1).contiguous(memory_format=torch.channels_last)
        bias = torch.from_numpy(np.ascontiguousarray(inputs["bias"], np.float32))
        top, left, bottom, right = p["pad"]
        stride, dilation, groups, kind, params = tuple(p["stride"]), tuple(p["dilation"]), p["groups"], \
            p["activation"], inputs["params"]
        if (top, left) != (bottom, right):
            pads = (left, right, top, bottom)
            return lambda: activate(F.conv2d(F.pad(src, pads), weight, bias, stride, 0, dilation, groups), kind,
                                    params, channel_dim=1)
        padding = (top, left)
        return lambda: activate(F.conv2d(src, weight, bias, stride, padding, dilation, groups), kind, params,
                                channel_dim=1)


# -- ONNX Runtime -----------------------------------------------------------------------------------------------------
class OnnxRuntime:
    """ONNX Runtime adapter of Convolution32f: ``Conv(pads=[top, left, bottom, right], strides, dilations, group)``
    on NCHW/OIHW (NHWC data and HWIO weights are transposed around it), then the activation where ONNX has the same
    function (``engines/onnxruntime/activation.py``).

    Prepared call (what ``simdbind bench`` times): the session is built and the feeds made once, and each call is
    ``session.run`` alone.
    """

    @staticmethod
    @adapter("onnxruntime", "convolution32f")
    @_every_call
    def convolution32f(case: Case, inputs: dict[str, Any]) -> np.ndarray:
        p = case.params
        src = np.asarray(inputs["src"], np.float32)
        weight = np.asarray(inputs["weight"], np.float32)
        if case.layout == "nhwc":
            src, weight = src.transpose(0, 3, 1, 2), weight.transpose(3, 2, 0, 1)
        top, left, bottom, right = p["pad"]
        act, initializers = activation_nodes(p["activation"], inputs["params"], p["dst_c"], 4, 1)
        attributes = dict(kernel_shape=list(p["kernel"]), strides=list(p["stride"]), dilations=list(p["dilation"]),
                          pads=[top, left, bottom, right], group=_groups(p))
        key = ("conv", tuple((k, tuple(v) if isinstance(v, list) else v) for k, v in sorted(attributes.items())),
               p["activation"], None if inputs["params"] is None else tuple(np.asarray(inputs["params"]).ravel()))
        build = lambda: model([node("Conv", ["x", "w", "b"], ["pre"], **attributes)] + act,  # noqa: E731
                              [("x", np.float32, 4), ("w", np.float32, 4), ("b", np.float32, 1)],
                              [("y", np.float32, 4)], initializers=initializers, opset=20)
        (y,) = session(key, build).run(None, {"x": np.ascontiguousarray(src), "w": np.ascontiguousarray(weight),
                                              "b": np.ascontiguousarray(inputs["bias"], np.float32)})
        if case.layout == "nhwc":
            y = y.transpose(0, 2, 3, 1)
        return np.ascontiguousarray(y)

    @staticmethod
    @preparer("onnxruntime", "convolution32f")
    def prepare_convolution32f(case: Case, inputs: dict[str, Any]) -> Callable[[], Any]:
        p = case.params
        src = np.asarray(inputs["src"], np.float32)
        weight = np.asarray(inputs["weight"], np.float32)
        if case.layout == "nhwc":
            src, weight = src.transpose(0, 3, 1, 2), weight.transpose(3, 2, 0, 1)
        act, initializers = activation_nodes(p["activation"], inputs["params"], p["dst_c"], 4, 1)
        attributes = dict(kernel_shape=list(p["kernel"]), strides=list(p["stride"]), dilations=list(p["dilation"]),
                          pads=list(p["pad"]), group=int(p["groups"]))
        feeds = {"x": np.ascontiguousarray(src), "w": np.ascontiguousarray(weight),
                 "b": np.ascontiguousarray(inputs["bias"], np.float32)}
        key = ("conv-prepared", case.descriptor)
        build = lambda: model([node("Conv", ["x", "w", "b"], ["pre"], **attributes)] + act,  # noqa: E731
                              [("x", np.float32, 4), ("w", np.float32, 4), ("b", np.float32, 1)],
                              [("y", np.float32, 4)], initializers=initializers, opset=20)
        run = session(key, build).run
        return lambda: run(None, feeds)[0]


# -- OpenVINO ---------------------------------------------------------------------------------------------------------
class OpenVINO:
    """OpenVINO adapter of Convolution32f: ``Convolution`` (group 1) or ``GroupConvolution`` (weights reshaped to
    (group, dstC/group, srcC/group, kY, kX)) with ``pads_begin = [top, left]``, ``pads_end = [bottom, right]``,
    ``strides`` and ``dilations``, then bias (``Add``) and the activation (``engines/openvino/_graph.activation``),
    on NCHW/OIHW (NHWC sources and HWIO weights are transposed around it). Weights are a model input, not a
    constant, so one compiled model serves every case of a geometry. Prepared call: made by
    ``engines/openvino/prepare.py``.
    """

    @staticmethod
    @adapter("openvino", "convolution32f")
    @_every_call
    def convolution32f(case: Case, inputs: dict[str, Any]) -> np.ndarray:
        from openvino import opset15 as ops

        p = case.params
        src = np.asarray(inputs["src"], np.float32)
        weight = np.asarray(inputs["weight"], np.float32)
        if case.layout == "nhwc":
            src, weight = src.transpose(0, 3, 1, 2), weight.transpose(3, 2, 0, 1)
        groups, (top, left, bottom, right) = int(p["groups"]), p["pad"]
        if groups > 1:
            weight = weight.reshape((groups, weight.shape[0] // groups) + weight.shape[1:])
        stride, dilation = list(p["stride"]), list(p["dilation"])

        def build(x: Any, w: Any, b: Any) -> list[Any]:
            if groups > 1:
                y = ops.group_convolution(x, w, stride, [top, left], [bottom, right], dilation)
            else:
                y = ops.convolution(x, w, stride, [top, left], [bottom, right], dilation)
            y = ops.add(y, ops.reshape(b, [1, -1, 1, 1], False))
            return [openvino_activation(y, p["activation"], inputs["params"], 1, 4)]

        key = ("conv", groups, tuple(stride), tuple(dilation), (top, left, bottom, right), p["activation"],
               params_key(inputs["params"]))
        y = openvino_run(key, build, src, weight, np.asarray(inputs["bias"], np.float32))[0]
        if case.layout == "nhwc":
            y = y.transpose(0, 2, 3, 1)
        return np.ascontiguousarray(y)


# -- ncnn -------------------------------------------------------------------------------------------------------------
class Ncnn:
    """ncnn adapter of Convolution32f: ``Convolution`` (group 1) or ``ConvolutionDepthWise`` (any other group count),
    with OIHW weights (ncnn's order for both), the four pads, strides, dilations and the bias, then the activation
    (``engines/ncnn/_graph.activation``), one image at a time on CHW (NHWC sources and HWIO weights are transposed
    around it). The edge group's non-finite inputs run with Winograd off (see below and docs/peers.md). Prepared
    call: made by ``engines/ncnn/prepare.py``.
    """

    @staticmethod
    @adapter("ncnn", "convolution32f")
    @_every_call
    def convolution32f(case: Case, inputs: dict[str, Any]) -> np.ndarray:
        p = case.params
        weight = np.asarray(inputs["weight"], np.float32)
        if case.layout == "nhwc":
            weight = weight.transpose(3, 2, 0, 1)
        groups, (top, left, bottom, right) = int(p["groups"]), p["pad"]
        (ky, kx), (sy, sx), (dy, dx) = p["kernel"], p["stride"], p["dilation"]
        params: dict[int, Any] = {0: p["dst_c"], 1: kx, 11: ky, 2: dx, 12: dy, 3: sx, 13: sy, 4: left, 15: right,
                                  14: top, 16: bottom, 5: 1, 6: weight.size}
        if groups > 1:
            params[7] = groups
        # A lone non-finite input: Winograd F(6x6,3x3) turns its whole tile NaN (Inf - Inf), which the case's rule
        # admits only for an algorithm a Simd library names in its info string; ncnn's direct and GEMM paths run
        # instead.
        graph = Graph(use_winograd_convolution=not p.get("special"))
        source = graph.input()
        y = graph.layer("ConvolutionDepthWise" if groups > 1 else "Convolution", [source], params,
                        [(weight, True), (np.asarray(inputs["bias"], np.float32), False)])
        y = ncnn_activation(graph, y, p["activation"], inputs["params"])
        run = graph.runner()
        return per_image(np.asarray(inputs["src"], np.float32), case.layout,
                         lambda image: run({source: image}, [y])[0])
