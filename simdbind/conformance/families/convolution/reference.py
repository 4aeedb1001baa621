"""References of the convolution family: a direct float64 convolution (SimdSynetConvolution32f's layouts and
activations as upstream documents them).

Written from the contract only. For output (dy, dx) and tap (ky, kx) the input row is
``dy*strideY + ky*dilationY - padY`` and the column ``dx*strideX + kx*dilationX - padX``; taps outside the image
read zero; the end pads only size the output. ``dst = act(sum + bias[o])`` with the activation of
:mod:`simdbind.conformance.activation`.
"""

from __future__ import annotations

import numpy as np

from simdbind.conformance.activation import activate


def output_size(size: int, kernel: int, stride: int, dilation: int, pad_begin: int, pad_end: int) -> int:
    """Floor-mode output size (upstream's documented formula)."""
    return (size + pad_begin + pad_end - (dilation * (kernel - 1) + 1)) // stride + 1


def conv2d_nchw(src: np.ndarray, weight: np.ndarray, bias: np.ndarray | None, *, stride: tuple[int, int],
                dilation: tuple[int, int], pad: tuple[int, int, int, int], group: int) -> np.ndarray:
    """Pre-activation convolution in float64. src [N][C][H][W]; weight OIHW [dstC][srcC/group][kY][kX].

    pad is (top, left, bottom, right). Returns [N][dstC][dstH][dstW] float64.
    """
    x = np.asarray(src, np.float64)
    w = np.asarray(weight, np.float64)
    batch, src_c, src_h, src_w = x.shape
    dst_c, group_c, k_y, k_x = w.shape
    (s_y, s_x), (d_y, d_x), (top, left, bottom, right) = stride, dilation, pad
    dst_h = output_size(src_h, k_y, s_y, d_y, top, bottom)
    dst_w = output_size(src_w, k_x, s_x, d_x, left, right)
    # Zero-pad generously so that every tap of every output is an in-bounds slice; the padded values are zeros,
    # exactly the "taps outside the image read zero" rule.
    extra_h = max(0, (dst_h - 1) * s_y + (k_y - 1) * d_y + 1 - (top + src_h))
    extra_w = max(0, (dst_w - 1) * s_x + (k_x - 1) * d_x + 1 - (left + src_w))
    padded = np.zeros((batch, src_c, top + src_h + extra_h, left + src_w + extra_w), np.float64)
    padded[:, :, top:top + src_h, left:left + src_w] = x
    out_per_group = dst_c // group
    # Channels split into groups: x [N][G][Cg][H][W], w [G][Og][Cg][kY][kX]; every tap is one contraction over Cg.
    xs = padded.reshape(batch, group, group_c, padded.shape[2], padded.shape[3])
    ws = w.reshape(group, out_per_group, group_c, k_y, k_x)
    acc = np.zeros((batch, group, out_per_group, dst_h, dst_w), np.float64)
    for ky in range(k_y):
        for kx in range(k_x):
            y0, x0 = ky * d_y, kx * d_x
            window = xs[:, :, :, y0:y0 + (dst_h - 1) * s_y + 1:s_y, x0:x0 + (dst_w - 1) * s_x + 1:s_x]
            acc += np.einsum("ngihw,goi->ngohw", window, ws[:, :, :, ky, kx], optimize=True)
    out = acc.reshape(batch, dst_c, dst_h, dst_w)
    if bias is not None:
        out += np.asarray(bias, np.float64)[None, :, None, None]
    return out


def convolution(src: np.ndarray, weight: np.ndarray, bias: np.ndarray | None, params: np.ndarray | None, *,
                layout: str, stride: tuple[int, int], dilation: tuple[int, int], pad: tuple[int, int, int, int],
                group: int, activation: str) -> np.ndarray:
    """SimdSynetConvolution32fForward in float64, rounded once to float32.

    src is [N][C][H][W] ("nchw") or [N][H][W][C] ("nhwc"); weight OIHW for "nchw" and HWIO [kY][kX][srcC/group][dstC]
    for "nhwc" (the weight layout follows the tensor format).
    """
    if layout == "nhwc":
        src = np.asarray(src).transpose(0, 3, 1, 2)
        weight = np.asarray(weight).transpose(3, 2, 0, 1)
    # Infinite and NaN inputs (the edge group) make inf - inf and 0 * inf: NaN, as in float32, without a warning.
    with np.errstate(over="ignore", invalid="ignore"):
        pre = conv2d_nchw(src, weight, bias, stride=stride, dilation=dilation, pad=pad, group=group)
        out = activate(pre, activation, None if params is None else np.asarray(params, np.float64), channel_axis=1)
        out = np.asarray(out, np.float64)
        if layout == "nhwc":
            out = out.transpose(0, 2, 3, 1)
        return np.ascontiguousarray(out).astype(np.float32)
