"""The other engines' adapters of the pooling family (pooling_average, pooling_max32f, pooling_max16b,
pooling_max8u), one class per engine: :class:`Torch`, :class:`OnnxRuntime`, :class:`OpenVINO`, :class:`Ncnn`. Each
class's docstring gives its mappings and what the engine cannot express; each adapter is registered on its engine's
implementation by :func:`~simdbind.conformance.engines.adapter` (prepared calls by
:func:`~simdbind.conformance.engines.preparer`) and imports its engine when it runs, so this module imports where no
engine is installed. The engines' shared plumbing is in ``simdbind/conformance/engines/<engine>/``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np

from simdbind.conformance import Case, Unsupported
from simdbind.conformance.engines import adapter, fallback, preparer
from simdbind.conformance.engines._bf16 import max_through_float32
from simdbind.conformance.engines.ncnn._graph import Graph, per_image
from simdbind.conformance.engines.onnxruntime.model import model, node, session
from simdbind.conformance.engines.openvino._graph import run as openvino_run
from simdbind.conformance.engines.torch import as_numpy, tensor

if TYPE_CHECKING:
    import torch


# -- PyTorch ----------------------------------------------------------------------------------------------------------
class Torch:
    """PyTorch adapters of the pooling family.

    Pooling mappings, on NCHW tensors (NHWC is permuted): ``F.avg_pool2d(x, kernel, stride, padding, ceil_mode,
    count_include_pad=False)`` for the exclude-pad average; with the pads included, ``divisor_override=kY*kX`` (Simd
    divides by the whole kernel area even where a ceil-mode window runs past the padded image; torch's
    count_include_pad would divide by the clipped area); ``F.max_pool2d`` (``F.max_pool3d`` with the channels as
    depth for 3D max pooling). Pads torch's own argument cannot take (asymmetric, or more than half the kernel) are
    applied with ``F.pad``: zeros for the average (window sums with ``divisor_override=1``, divided by the kernel area
    or, pads excluded, by the count of real elements), -inf for the maximum, floored at -FLT_MAX as Simd's maximum
    is; torch's ceil-mode rule (the last window starts inside the image or its begin pad) is then applied to the real
    geometry again, since after explicit padding torch sees the end pads as image. bf16 and uint8 maxima are taken
    in float32 (exact for both) and converted back. Skipped: the direct calls with an explicit output size, and the
    edge group (Simd's NaN order and -inf under the -FLT_MAX floor).

    Prepared calls (what ``simdbind bench`` times): the tensor is made once (NHWC as a ``channels_last`` view) and
    each call is ``F.max_pool2d``/``F.avg_pool2d`` alone; the cases that need more than one torch call (asymmetric
    pads, 3D or ceil mode, the edge group, channel pads) run the adapter.
    """

    @staticmethod
    def _to_nchw(x: np.ndarray, layout: str) -> tuple[torch.Tensor, bool]:
        import torch

        t = torch.from_numpy(np.ascontiguousarray(x))
        batched = t.dim() == 4
        if not batched:
            t = t.unsqueeze(0)
        if layout == "nhwc":
            t = t.permute(0, 3, 1, 2)
        return t.contiguous(), batched

    @staticmethod
    def _from_nchw(t: torch.Tensor, layout: str, batched: bool) -> torch.Tensor:
        if layout == "nhwc":
            t = t.permute(0, 2, 3, 1)
        if not batched:
            t = t.squeeze(0)
        return t.contiguous()

    @staticmethod
    def _geometry(case: Case) -> tuple[tuple[int, int], tuple[int, int], tuple[int, int, int, int]]:
        """kernel, stride and the pads as F.pad takes them: (left, right, top, bottom)."""
        p = case.params
        if case.group == "edge":
            raise Unsupported("edge group: Simd's NaN order and -FLT_MAX floor are implementation-defined")
        if p.get("direct"):
            raise Unsupported("a direct call with an explicit output size (torch derives it)")
        return (p["ky"], p["kx"]), (p["sy"], p["sx"]), (p["pad_left"], p["pad_right"], p["pad_top"], p["pad_bottom"])

    @staticmethod
    def _crop(y: torch.Tensor, image: Sequence[int], stride: tuple[int, int], pads: tuple[int, int, int, int],
              ceil: bool) -> torch.Tensor:
        """After explicit padding, torch's ceil-mode rule (the last window starts inside the image or its begin pad)
        sees the end pads as image: apply it to the real geometry again."""
        if not ceil:
            return y
        (h, w), (sy, sx), (left, _, top, _) = image, stride, pads
        out_h, out_w = y.shape[-2], y.shape[-1]
        if out_h > 1 and (out_h - 1) * sy >= h + top:
            out_h -= 1
        if out_w > 1 and (out_w - 1) * sx >= w + left:
            out_w -= 1
        return y[..., :out_h, :out_w]

    @staticmethod
    def _symmetric(pads: tuple[int, int, int, int], kernel: tuple[int, int]) -> tuple[int, int] | None:
        """torch's own padding argument when the pads allow it (both sides alike, at most half the kernel)."""
        left, right, top, bottom = pads
        if left == right and top == bottom and top <= kernel[0] // 2 and left <= kernel[1] // 2:
            return top, left
        return None

    @staticmethod
    @adapter("torch", "pooling_average")
    def pooling_average(case: Case, inputs: dict[str, Any]) -> np.ndarray:
        import torch
        import torch.nn.functional as F

        kernel, stride, pads = Torch._geometry(case)
        t, batched = Torch._to_nchw(np.asarray(inputs["x"], np.float32), case.layout)
        ceil, exclude = case.params["ceil"], case.params["exclude"]
        padding = Torch._symmetric(pads, kernel)
        if padding is not None and exclude:
            y = F.avg_pool2d(t, kernel, stride, padding, ceil_mode=ceil, count_include_pad=False)
        elif padding is not None:
            y = F.avg_pool2d(t, kernel, stride, padding, ceil_mode=ceil, divisor_override=kernel[0] * kernel[1])
        else:
            total = F.avg_pool2d(F.pad(t, pads), kernel, stride, 0, ceil_mode=ceil, divisor_override=1)
            if exclude:
                ones = F.pad(torch.ones_like(t[:1, :1]), pads)
                y = total / F.avg_pool2d(ones, kernel, stride, 0, ceil_mode=ceil, divisor_override=1)
            else:
                y = total / float(kernel[0] * kernel[1])
            y = Torch._crop(y, tuple(t.shape[-2:]), stride, pads, ceil)
        return as_numpy(Torch._from_nchw(y, case.layout, batched))

    @staticmethod
    def _max(case: Case, x32: np.ndarray) -> torch.Tensor:
        import torch
        import torch.nn.functional as F

        p = case.params
        kernel, stride, pads = Torch._geometry(case)
        t, batched = Torch._to_nchw(x32, case.layout)
        padding = Torch._symmetric(pads, kernel)
        channel = (p.get("kc", 1), p.get("sc", 1), p.get("pc_begin", 0), p.get("pc_end", 0))
        explicit = padding is None
        image = tuple(t.shape[-2:])
        if padding is None:
            t, padding = F.pad(t, pads, value=float("-inf")), (0, 0)
        if channel == (1, 1, 0, 0):
            y = F.max_pool2d(t, kernel, stride, padding, ceil_mode=p["ceil"])
        else:
            kc, sc, pcb, pce = channel
            if pcb != pce or pcb > kc // 2:
                raise Unsupported("asymmetric or large channel pads: torch pads both sides alike, at most half")
            y = F.max_pool3d(t.unsqueeze(1), (kc, *kernel), (sc, *stride), (pcb, *padding), ceil_mode=p["ceil"])
            y = y.squeeze(1)
        if explicit:
            y = Torch._crop(y, image, stride, pads, p["ceil"])
        # Simd's maximum starts at -FLT_MAX: a window of padding only gives -FLT_MAX, not -inf.
        y = torch.clamp(y, min=-float(np.finfo(np.float32).max))
        return Torch._from_nchw(y, case.layout, batched)

    @staticmethod
    @adapter("torch", "pooling_max32f")
    def pooling_max32f(case: Case, inputs: dict[str, Any]) -> np.ndarray:
        return as_numpy(Torch._max(case, np.asarray(inputs["x"], np.float32)))

    @staticmethod
    @adapter("torch", "pooling_max16b")
    def pooling_max16b(case: Case, inputs: dict[str, Any]) -> np.ndarray:
        bits = np.ascontiguousarray(inputs["x"]).view(np.uint16)
        y = as_numpy(Torch._max(case, (bits.astype(np.uint32) << 16).view(np.float32)))
        return (y.view(np.uint32) >> 16).astype(np.uint16)  # the maxima are bf16 values: exact

    @staticmethod
    @adapter("torch", "pooling_max8u")
    def pooling_max8u(case: Case, inputs: dict[str, Any]) -> np.ndarray:
        return as_numpy(Torch._max(case, np.asarray(inputs["x"]).astype(np.float32))).astype(np.uint8)

    @staticmethod
    def _prepared_geometry(case: Case) -> tuple[tuple[int, int], tuple[int, int], tuple[int, int]] | None:
        """kernel, stride and torch's padding, or None where the adapter needs more than one torch call."""
        p = case.params
        if case.group == "edge" or p["direct"] or p["ceil"] or (p.get("kc", 1), p.get("sc", 1)) != (1, 1):
            return None
        kernel = (p["ky"], p["kx"])
        padding = Torch._symmetric((p["pad_left"], p["pad_right"], p["pad_top"], p["pad_bottom"]), kernel)
        return None if padding is None else (kernel, (p["sy"], p["sx"]), padding)

    @staticmethod
    @preparer("torch", "pooling_max32f")
    def prepare_pooling_max32f(case: Case, inputs: dict[str, Any]) -> Callable[[], Any]:
        import torch.nn.functional as F

        geometry = Torch._prepared_geometry(case)
        if geometry is None or case.params.get("pc_begin", 0) or case.params.get("pc_end", 0):
            return fallback("torch", case, inputs)
        kernel, stride, padding = geometry
        t = tensor(inputs["x"], case.layout)
        return lambda: F.max_pool2d(t, kernel, stride, padding)

    @staticmethod
    @preparer("torch", "pooling_average")
    def prepare_pooling_average(case: Case, inputs: dict[str, Any]) -> Callable[[], Any]:
        import torch.nn.functional as F

        geometry = Torch._prepared_geometry(case)
        if geometry is None:
            return fallback("torch", case, inputs)
        kernel, stride, padding = geometry
        t = tensor(inputs["x"], case.layout)
        if case.params["exclude"]:
            return lambda: F.avg_pool2d(t, kernel, stride, padding, count_include_pad=False)
        area = kernel[0] * kernel[1]
        return lambda: F.avg_pool2d(t, kernel, stride, padding, divisor_override=area)


# -- ONNX Runtime -----------------------------------------------------------------------------------------------------
class OnnxRuntime:
    """ONNX Runtime adapters of the pooling family, one-node models.

    Pooling: ``AveragePool``/``MaxPool`` with ``pads = [top, left, bottom, right]`` (asymmetric pads are native to
    ONNX), ``strides``, ``ceil_mode`` and, for the average, ``count_include_pad = not exclude_pad``; NCHW (NHWC is
    transposed around the node); bf16 and uint8 maxima are taken in float32 (exact) and converted back. Not
    expressible, so skipped: ceil-mode averages with the pads included (ONNX Runtime divides a window that runs past
    the padded image by its clipped area, Simd by the kernel area), 3D (channel) max pooling, the direct calls with
    an explicit output size, and the edge group (Simd's NaN order and -FLT_MAX floor).

    No prepared calls of its own: ``run`` is one ``session.run`` on a cached session, inside the layout and dtype
    conversions (NHWC, bf16 and uint8), which the benchmark rows time too.
    """

    @staticmethod
    def _pool(case: Case, op: str, x: np.ndarray, **extra: Any) -> np.ndarray:
        p = case.params
        if case.group == "edge":
            raise Unsupported("edge group: Simd's NaN order and -FLT_MAX floor are implementation-defined")
        if p.get("direct"):
            raise Unsupported("a direct call with an explicit output size (ONNX derives it)")
        if (p.get("kc", 1), p.get("sc", 1), p.get("pc_begin", 0), p.get("pc_end", 0)) != (1, 1, 0, 0):
            raise Unsupported("pooling across channels (3D): ONNX MaxPool pools the spatial axes only")
        attributes = dict(kernel_shape=[p["ky"], p["kx"]], strides=[p["sy"], p["sx"]],
                          pads=[p["pad_top"], p["pad_left"], p["pad_bottom"], p["pad_right"]],
                          ceil_mode=int(p["ceil"]), **extra)
        batched = x.ndim == 4
        t = x if batched else x[None]
        if case.layout == "nhwc":
            t = t.transpose(0, 3, 1, 2)
        key = (op, tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in attributes.items())))
        build = lambda: model([node(op, ["x"], ["y"], **attributes)], [("x", np.float32, 4)],  # noqa: E731
                              [("y", np.float32, 4)], opset=19)
        (y,) = session(key, build).run(None, {"x": np.ascontiguousarray(t, np.float32)})
        if case.layout == "nhwc":
            y = y.transpose(0, 2, 3, 1)
        return np.ascontiguousarray(y if batched else y[0])

    @staticmethod
    @adapter("onnxruntime", "pooling_average")
    def pooling_average(case: Case, inputs: dict[str, Any]) -> np.ndarray:
        if case.params["ceil"] and not case.params["exclude"]:
            raise Unsupported("ceil mode with the pads included: ONNX Runtime divides a window that runs past the "
                              "padded image by its clipped area, Simd by the kernel area (no divisor override in "
                              "ONNX)")
        return OnnxRuntime._pool(case, "AveragePool", np.asarray(inputs["x"], np.float32),
                                 count_include_pad=int(not case.params["exclude"]))

    @staticmethod
    @adapter("onnxruntime", "pooling_max32f")
    def pooling_max32f(case: Case, inputs: dict[str, Any]) -> np.ndarray:
        return OnnxRuntime._pool(case, "MaxPool", np.asarray(inputs["x"], np.float32))

    @staticmethod
    @adapter("onnxruntime", "pooling_max16b")
    def pooling_max16b(case: Case, inputs: dict[str, Any]) -> np.ndarray:
        bits = np.ascontiguousarray(inputs["x"]).view(np.uint16)
        y = OnnxRuntime._pool(case, "MaxPool", (bits.astype(np.uint32) << 16).view(np.float32))
        return (y.view(np.uint32) >> 16).astype(np.uint16)

    @staticmethod
    @adapter("onnxruntime", "pooling_max8u")
    def pooling_max8u(case: Case, inputs: dict[str, Any]) -> np.ndarray:
        return OnnxRuntime._pool(case, "MaxPool", np.asarray(inputs["x"]).astype(np.float32)).astype(np.uint8)


# -- OpenVINO ---------------------------------------------------------------------------------------------------------
class OpenVINO:
    """OpenVINO adapters of the pooling family.

    ``AvgPool``/``MaxPool`` (opset 14) with ``pads_begin = [top, left]``, ``pads_end = [bottom, right]``
    (asymmetric pads are native), ``strides``, ``exclude_pad``, and ``rounding_type = ceil_torch`` in ceil mode: the
    last window must start inside the image or its begin pad, Simd's rule; plain ``ceil`` keeps a last
    window that starts in the end pad. A ceil-mode average with the pads included divides by the kernel area in
    Simd, also where the last window runs past the end pad; OpenVINO divides such a window by the part inside the
    padded image, so there the end pads are widened to cover the last window and rounding is ``floor`` (the same
    windows, each with its zeros counted). NHWC is transposed around the node. 3D max pooling runs ``MaxPool`` on
    (N, 1, C, H, W) with the channels as depth and the channel pads as depth pads (asymmetric too). bf16 maxima are
    taken in float32 (exact) and converted back; uint8 maxima run on u8 tensors.

    Not expressible, so skipped: the direct calls with an explicit output size (OpenVINO derives it); the edge group
    (Simd's NaN order of the fold and its -FLT_MAX floor under -inf are implementation-defined, OpenVINO's window
    starts at -inf). Prepared calls: every adapter's, made by ``engines/openvino/prepare.py``.
    """

    @staticmethod
    def _ceil_count(size: int, kernel: int, stride: int, begin: int, end: int) -> int:
        """Outputs along one axis in ceil mode: the last window starts inside the image or its begin pad."""
        count = -(-(size + begin + end - kernel) // stride) + 1
        return count - 1 if count > 1 and (count - 1) * stride >= size + begin else count

    @staticmethod
    def _pool(case: Case, x: np.ndarray, average: bool) -> np.ndarray:
        from openvino import opset15 as ops

        p = case.params
        if case.group == "edge":
            raise Unsupported("edge group: Simd's NaN order and -FLT_MAX floor are implementation-defined")
        if p.get("direct"):
            raise Unsupported("a direct call with an explicit output size (OpenVINO derives it)")
        kernel, stride = [p["ky"], p["kx"]], [p["sy"], p["sx"]]
        begin, end = [p["pad_top"], p["pad_left"]], [p["pad_bottom"], p["pad_right"]]
        channel = (p.get("kc", 1), p.get("sc", 1), p.get("pc_begin", 0), p.get("pc_end", 0))
        rounding = "ceil_torch" if p["ceil"] else "floor"
        if average and p["ceil"] and not p["exclude"]:
            size = (p["height"], p["width"])
            end = [max(e, (OpenVINO._ceil_count(n, k, s, b, e) - 1) * s + k - n - b)
                   for n, k, s, b, e in zip(size, kernel, stride, begin, end)]
            rounding = "floor"
        batched = x.ndim == 4
        t = x if batched else x[None]
        if case.layout == "nhwc":
            t = t.transpose(0, 3, 1, 2)
        three_d = channel != (1, 1, 0, 0)
        if three_d:
            kc, sc, pcb, pce = channel
            t = t[:, None]
            kernel, stride, begin, end = [kc] + kernel, [sc] + stride, [pcb] + begin, [pce] + end
        dilations = [1] * len(kernel)

        def build(v: Any) -> list[Any]:
            if average:
                return [ops.avg_pool(v, stride, begin, end, kernel, bool(p["exclude"]), rounding)]
            return [ops.max_pool(v, stride, dilations, begin, end, kernel, rounding).output(0)]

        key = ("avg" if average else "max", p["exclude"] if average else None, tuple(kernel), tuple(stride),
               tuple(begin), tuple(end), rounding)
        y = openvino_run(key, build, t)[0]
        if three_d:
            y = y[:, 0]
        if case.layout == "nhwc":
            y = y.transpose(0, 2, 3, 1)
        return np.ascontiguousarray(y if batched else y[0])

    @staticmethod
    @adapter("openvino", "pooling_average")
    def pooling_average(case: Case, inputs: dict[str, Any]) -> np.ndarray:
        return OpenVINO._pool(case, np.asarray(inputs["x"], np.float32), average=True)

    @staticmethod
    @adapter("openvino", "pooling_max32f")
    def pooling_max32f(case: Case, inputs: dict[str, Any]) -> np.ndarray:
        return OpenVINO._pool(case, np.asarray(inputs["x"], np.float32), average=False)

    @staticmethod
    @adapter("openvino", "pooling_max16b")
    def pooling_max16b(case: Case, inputs: dict[str, Any]) -> np.ndarray:
        return max_through_float32(lambda x: OpenVINO._pool(case, x, average=False), inputs["x"])

    @staticmethod
    @adapter("openvino", "pooling_max8u")
    def pooling_max8u(case: Case, inputs: dict[str, Any]) -> np.ndarray:
        return OpenVINO._pool(case, np.asarray(inputs["x"], np.uint8), average=False)


# -- ncnn -------------------------------------------------------------------------------------------------------------
class Ncnn:
    """ncnn adapters of the pooling family.

    ``Pooling`` (MAX or AVG) with ``pad_mode = 1`` (the pads as given) and the four pads explicit, one image at a
    time (NHWC transposed around it); 3D max pooling is ``Pooling3D`` on a (1, C, H, W) blob with the channels as
    depth and the channel pads as front/behind pads. Ceil mode: Simd keeps a last window that starts inside the image
    or its begin pad; the end pads are widened to cover it, which is exact because ncnn pads a maximum
    with -FLT_MAX, an average excluding pads counts only image elements, and an average including pads divides by the
    kernel area, as Simd does (ncnn's own ``pad_mode = 0`` "full" rule would keep a last window that starts in the
    end pad). bf16 and uint8 maxima are taken in float32 (exact for both) and converted back.

    Not expressible, so skipped: the direct calls with an explicit output size, and the edge group (Simd's NaN order
    of the fold and its -FLT_MAX floor are implementation-defined). Prepared calls: every adapter's, made by
    ``engines/ncnn/prepare.py``.
    """

    @staticmethod
    def _count(size: int, kernel: int, stride: int, begin: int, end: int, ceil: bool) -> int:
        """Outputs along one axis; in ceil mode the last window starts inside the image or its begin pad."""
        total = size + begin + end - kernel
        if not ceil:
            return total // stride + 1
        count = -(-total // stride) + 1
        return count - 1 if count > 1 and (count - 1) * stride >= size + begin else count

    @staticmethod
    def _end(size: int, kernel: int, stride: int, begin: int, end: int, ceil: bool) -> int:
        """The end pad that makes ncnn's floor rule give the case's output count."""
        return max(end, (Ncnn._count(size, kernel, stride, begin, end, ceil) - 1) * stride + kernel - size - begin)

    @staticmethod
    def _pool(case: Case, x: np.ndarray, average: bool) -> np.ndarray:
        p = case.params
        if case.group == "edge":
            raise Unsupported("edge group: Simd's NaN order and -FLT_MAX floor are implementation-defined")
        if p.get("direct"):
            raise Unsupported("a direct call with an explicit output size (ncnn derives it)")
        ceil = p["ceil"]
        h, w = p["height"], p["width"]
        params: dict[int, Any] = {
            0: 1 if average else 0, 1: p["kx"], 11: p["ky"], 2: p["sx"], 12: p["sy"], 5: 1,
            3: p["pad_left"], 14: Ncnn._end(w, p["kx"], p["sx"], p["pad_left"], p["pad_right"], ceil),
            13: p["pad_top"], 15: Ncnn._end(h, p["ky"], p["sy"], p["pad_top"], p["pad_bottom"], ceil)}
        if average:
            params[6] = 0 if p["exclude"] else 1
        graph = Graph()
        source = graph.input()
        kc, sc, pcb, pce = p.get("kc", 1), p.get("sc", 1), p.get("pc_begin", 0), p.get("pc_end", 0)
        three_d = (kc, sc, pcb, pce) != (1, 1, 0, 0)
        if three_d:
            params.update({21: kc, 22: sc, 23: pcb, 16: Ncnn._end(p["channels"], kc, sc, pcb, pce, ceil)})
        y = graph.layer("Pooling3D" if three_d else "Pooling", [source], params)
        run = graph.runner()

        def one(image: np.ndarray) -> np.ndarray:
            if three_d:
                volume: np.ndarray = run({source: image[None]}, [y])[0][0]  # a (1, C, H, W) blob per image
                return volume
            return run({source: image}, [y])[0]

        return per_image(x, case.layout, one)

    @staticmethod
    @adapter("ncnn", "pooling_average")
    def pooling_average(case: Case, inputs: dict[str, Any]) -> np.ndarray:
        return Ncnn._pool(case, np.asarray(inputs["x"], np.float32), average=True)

    @staticmethod
    @adapter("ncnn", "pooling_max32f")
    def pooling_max32f(case: Case, inputs: dict[str, Any]) -> np.ndarray:
        return Ncnn._pool(case, np.asarray(inputs["x"], np.float32), average=False)

    @staticmethod
    @adapter("ncnn", "pooling_max16b")
    def pooling_max16b(case: Case, inputs: dict[str, Any]) -> np.ndarray:
        return max_through_float32(lambda x: Ncnn._pool(case, x, average=False), inputs["x"])

    @staticmethod
    @adapter("ncnn", "pooling_max8u")
    def pooling_max8u(case: Case, inputs: dict[str, Any]) -> np.ndarray:
        return Ncnn._pool(case, np.asarray(inputs["x"]).astype(np.float32), average=False).astype(np.uint8)
