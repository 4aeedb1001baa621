"""References of the pooling family, from upstream's documentation of the functions and its Base code
(SimdBaseSynetPooling.cpp).

Geometry: output ``d`` of an axis covers input indices ``[d*stride - pad, d*stride - pad + kernel)`` clipped to the
input; nothing else is read (an empty clipped window is simply empty). The output size is either given (the C
arguments) or follows ``floor_or_ceil((size + pad_begin + pad_end - kernel) / stride) + 1``, where ceil mode drops a
last window that starts at or past ``size + pad_begin``... measured from the padded origin (PyTorch/ONNX rule).

* Average: float64 sum of the window / (clipped count if exclude_pad else kernel_y*kernel_x), rounded to float32;
  an empty window gives NaN with exclude_pad (0/0) and 0 without.
* Max (float32): the fold ``m = m > v ? m : v`` from ``-FLT_MAX`` in scan order: row-major (y, x) per channel;
  3D windows fold (c, y, x) for NCHW and (y, x, c) for NHWC.
* Max (bf16): bf16 -> float32 exactly (bits << 16), the float32 fold, then round-to-nearest-even on the bit
  pattern (``(u + 0x7FFF + ((u >> 16) & 1)) >> 16`` modulo 2^32).
* Max (uint8): the maximum from 0.
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

FLT_MAX = np.float32(np.finfo(np.float32).max)

#: Per output index and kernel offset: the (clamped) input index and whether it is inside the input (see _taps).
Taps = tuple[np.ndarray, np.ndarray]


def output_size(size: int, kernel: int, stride: int, pad_begin: int, pad_end: int, ceil_mode: bool) -> int:
    """The usual floor/ceil rule; in ceil mode the last window must start inside the input or the begin pad."""
    total = size + pad_begin + pad_end - kernel
    if ceil_mode:
        count = (total + stride - 1) // stride + 1
        while count > 1 and (count - 1) * stride >= size + pad_begin:
            count -= 1
        return count
    return total // stride + 1


def _taps(size: int, out: int, kernel: int, stride: int, pad: int) -> Taps:
    """For every output index and kernel offset: the input index (clamped for safe indexing) and whether it is
    inside the input. Shapes (out, kernel)."""
    index = np.arange(out)[:, None] * stride - pad + np.arange(kernel)[None, :]
    inside = (index >= 0) & (index < size)
    return np.clip(index, 0, max(size - 1, 0)), inside


def _to_chw(x: np.ndarray, layout: str) -> np.ndarray:
    return x if layout == "nchw" else np.transpose(x, (2, 0, 1))


def _from_chw(y: np.ndarray, layout: str) -> np.ndarray:
    return np.ascontiguousarray(y if layout == "nchw" else np.transpose(y, (1, 2, 0)))


def _fold_max(x: np.ndarray, taps_c: Taps, taps_y: Taps, taps_x: Taps, order: str, start: np.float32) -> np.ndarray:
    """Fold ``m = m > v ? m : v`` over 3D windows of x (C, H, W) in `order` ("cyx" or "yxc"), from `start`."""
    (ic, vc), (iy, vy), (ix, vx) = taps_c, taps_y, taps_x
    acc = np.full((ic.shape[0], iy.shape[0], ix.shape[0]), start, x.dtype)
    offsets = [(kc, ky, kx) for kc in range(ic.shape[1]) for ky in range(iy.shape[1]) for kx in range(ix.shape[1])]
    if order == "yxc":
        offsets.sort(key=lambda t: (t[1], t[2], t[0]))
    for kc, ky, kx in offsets:
        value = x[ic[:, kc][:, None, None], iy[:, ky][None, :, None], ix[:, kx][None, None, :]]
        inside = vc[:, kc][:, None, None] & vy[:, ky][None, :, None] & vx[:, kx][None, None, :]
        with np.errstate(invalid="ignore"):
            take = inside & ~(acc > value)
        acc = np.where(take, value, acc)
    return acc


def _identity_channels(c: int) -> Taps:
    return np.arange(c)[:, None], np.ones((c, 1), bool)


def max_image(x: np.ndarray, kernel: Sequence[int], stride: Sequence[int], pad: Sequence[int], out_hw: Sequence[int],
              layout: str, *, channel: tuple[int, int, int, int] | None = None) -> np.ndarray:
    """Max pooling of one image with explicit begin pads and output size (the C function's arguments).

    `x` is float32 (C, H, W) or (H, W, C), bf16 as uint16, or uint8. `channel` is None (2D) or
    (kernel_c, stride_c, pad_c, out_c) for 3D float32 pooling.
    """
    chw = _to_chw(x, layout)
    c, h, w = chw.shape
    ty = _taps(h, out_hw[0], kernel[0], stride[0], pad[0])
    tx = _taps(w, out_hw[1], kernel[1], stride[1], pad[1])
    tc = _identity_channels(c) if channel is None else _taps(c, channel[3], channel[0], channel[1], channel[2])
    order = "cyx" if layout == "nchw" else "yxc"
    if x.dtype == np.uint8:
        acc = np.zeros((tc[0].shape[0], out_hw[0], out_hw[1]), np.uint8)
        for kc in range(tc[0].shape[1]):
            for ky in range(ty[0].shape[1]):
                for kx in range(tx[0].shape[1]):
                    value = chw[tc[0][:, kc][:, None, None], ty[0][:, ky][None, :, None], tx[0][:, kx][None, None, :]]
                    inside = tc[1][:, kc][:, None, None] & ty[1][:, ky][None, :, None] & tx[1][:, kx][None, None, :]
                    acc = np.where(inside, np.maximum(acc, value), acc)
        return _from_chw(acc, layout)
    if x.dtype == np.uint16:
        as_float = (chw.astype(np.uint32) << 16).view(np.float32)
        folded = _fold_max(as_float, tc, ty, tx, order, -FLT_MAX)
        u = folded.view(np.uint32).astype(np.uint64)
        bf16 = (((u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFFFFFF) >> 16).astype(np.uint16)
        return _from_chw(bf16, layout)
    return _from_chw(_fold_max(chw.astype(np.float32), tc, ty, tx, order, -FLT_MAX), layout)


def average_image(x: np.ndarray, kernel: Sequence[int], stride: Sequence[int], pad: Sequence[int],
                  out_hw: Sequence[int], layout: str, exclude_pad: bool) -> np.ndarray:
    """Average pooling of one float32 image with explicit begin pads and output size, in float64."""
    chw = _to_chw(x, layout).astype(np.float64)
    c, h, w = chw.shape
    iy, vy = _taps(h, out_hw[0], kernel[0], stride[0], pad[0])
    ix, vx = _taps(w, out_hw[1], kernel[1], stride[1], pad[1])
    total = np.zeros((c, out_hw[0], out_hw[1]), np.float64)
    for ky in range(kernel[0]):
        for kx in range(kernel[1]):
            inside = vy[:, ky][:, None] & vx[:, kx][None, :]
            value = chw[:, iy[:, ky][:, None], ix[:, kx][None, :]]
            with np.errstate(invalid="ignore"):  # inf + -inf is NaN, as in the float32 sum
                total += np.where(inside[None], value, 0.0)
    count = vy.sum(axis=1)[:, None] * vx.sum(axis=1)[None, :]
    divisor = count.astype(np.float64) if exclude_pad else np.float64(kernel[0] * kernel[1])
    with np.errstate(invalid="ignore", divide="ignore"):
        result = (total / divisor).astype(np.float32)
    return _from_chw(result, layout)


def _batched(x: np.ndarray, layout: str, fn: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    if x.ndim == 3:
        return fn(x)
    return np.stack([fn(image) for image in x])


def _spatial(x: np.ndarray, layout: str) -> tuple[int, int, int]:
    shape = x.shape[-3:]
    return (shape[0], shape[1], shape[2]) if layout == "nchw" else (shape[2], shape[0], shape[1])


def pooling_average(x: np.ndarray, kernel: Sequence[int], stride: Sequence[int], pads: Sequence[Sequence[int]],
                    layout: str, ceil_mode: bool,
                    exclude_pad: bool) -> np.ndarray:
    """`pads` is ((top, bottom), (left, right)); x is 3-D or 4-D in `layout`."""
    _, h, w = _spatial(x, layout)
    out_hw = (output_size(h, kernel[0], stride[0], pads[0][0], pads[0][1], ceil_mode),
              output_size(w, kernel[1], stride[1], pads[1][0], pads[1][1], ceil_mode))
    return _batched(x, layout, lambda image: average_image(
        image, kernel, stride, (pads[0][0], pads[1][0]), out_hw, layout, exclude_pad))


def pooling_max(x: np.ndarray, kernel: Sequence[int], stride: Sequence[int], pads: Sequence[Sequence[int]],
                layout: str, ceil_mode: bool, channel: tuple[int, int, tuple[int, int]] | None = None) -> np.ndarray:
    """`channel` is None or (kernel_c, stride_c, (pad_c_begin, pad_c_end)) for 3D pooling."""
    c, h, w = _spatial(x, layout)
    out_hw = (output_size(h, kernel[0], stride[0], pads[0][0], pads[0][1], ceil_mode),
              output_size(w, kernel[1], stride[1], pads[1][0], pads[1][1], ceil_mode))
    channel_args = None
    if channel is not None:
        kc, sc, (pcb, pce) = channel
        channel_args = (kc, sc, pcb, output_size(c, kc, sc, pcb, pce, ceil_mode))
    return _batched(x, layout, lambda image: max_image(
        image, kernel, stride, (pads[0][0], pads[1][0]), out_hw, layout, channel=channel_args))
