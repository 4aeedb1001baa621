"""Every way simdbind calls around a defect of upstream Simd builds, in one place.

A route is named after the catalogue entry that describes its defect
(``simdbind/conformance/families/<family>/deviations.json``, by id). It is taken for a library when the library is not
the bundled one (which has none of these defects) and the library's ``SimdVersion`` lies in the entry's ``versions``:
the range is written once, in that data, and read here through the catalogue's loader
(:func:`simdbind.conformance.deviations.family`), imported on the first route lookup. A version that cannot be read is routed (the safe side).
A route whose defect lives in the code of some ISAs only (``isas``, the ISAs the entry's ``when`` names) is taken
only when the library dispatches to one of them: elsewhere the reshaped call could meet another ISA's deviation
that the direct call does not have.

The wrappers ask :meth:`Route.taken` (or the helpers below) and never look at the library's kind themselves.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any, overload

import numpy as np

from simdbind._versions import VersionRange
from simdbind.enums import Activation
from simdbind.library import ISAS

__all__ = ["Route", "ROUTES", "taken_among", "serialises_context_calls", "behind_zeros", "max32f_route", "upstream_max32f_route",
           "lrn_route", "upstream_lrn_is_wrong", "softmax16b_parts", "upstream_reads_before_b", "behind_gemm_guard",
           "b_guard_route", "ConvolutionRoute", "conv32f_route", "upstream_conv32f_route", "with_zero_channel"]

_BUNDLED = "bundled"


@functools.cache
def catalogue_versions(family: str) -> dict[str, VersionRange]:
    """Entry id -> versions, from the catalogue file of `family` (package data)."""
    from simdbind.conformance import deviations

    return {entry.id: entry.versions for entry in deviations.family(family).entries}


@functools.cache
def _taken(family: str, entry: str, kind: str, version: str) -> bool:
    if kind == _BUNDLED:
        return False
    try:
        versions = catalogue_versions(family)[entry]
    except KeyError:
        raise LookupError(f"route {entry!r}: no such entry in the catalogue file {family}/deviations.json") from None
    return versions.contains(version)


@dataclass(frozen=True)
class Route:
    """A way around the upstream defect that catalogue entry `entry` of `family`'s deviations.json describes."""

    entry: str
    family: str
    what: str  # what the route does instead of the direct call
    isas: tuple[str, ...] = ()  # the ISAs whose code has the defect (as the entry's `when` names them); () for all

    def taken(self, library: Any) -> bool:
        """Whether calls on `library` take this route (the version range is looked up once per kind and version)."""
        return _taken(self.family, self.entry, library.kind, getattr(library, "version", "")) and self._at(library)

    def _at(self, library: Any) -> bool:
        """Whether `library` dispatches to an ISA of `isas` (an unknown ISA: the safe side)."""
        if not self.isas:
            return True
        isa = getattr(library, "isa", "unknown")
        return isa in self.isas or isa not in ISAS


def taken_among(library: Any, routes: tuple[Route, ...]) -> frozenset[Route]:
    """The routes of `routes` that calls on `library` take (one cached lookup: per-call wrappers use it)."""
    taken = _taken_among(routes, library.kind, getattr(library, "version", ""))
    return taken if not any(r.isas for r in taken) else frozenset(r for r in taken if r._at(library))


@functools.cache
def _taken_among(routes: tuple[Route, ...], kind: str, version: str) -> frozenset[Route]:
    return frozenset(r for r in routes if _taken(r.family, r.entry, kind, version))


# -- the routes --------------------------------------------------------------------------------------------------
MAX32F_NHWC_SMALL_CHANNELS = Route("max32f-nhwc-small-channels-no-op", "pooling",
                                   "NHWC channels zero-padded to 16 (pooling is per channel)")
MAX32F_SOLID2X2_TAIL = Route("max32f-avx512-solid2x2-tail", "pooling",
                             "NHWC channels zero-padded until srcC * dstW is a multiple of 16")
MAX32F_NCHW_SPECIAL_KERNELS = Route("max32f-nchw-special-kernels", "pooling",
                                    "2D NCHW computed in NHWC (same scan order per channel, same bits)")
SOFTMAX32F_SINGLE_ELEMENT = Route("softmax-sse41-avx2-single-element-slices-overrun", "elementwise",
                                  "one slice of `outer` positions instead: the same softmax of one element each",
                                  ("sse41", "avx2"))
SOFTMAX16B_SINGLE_ELEMENT = Route("softmax16b-sse41-avx2-single-element-slices-overrun", "elementwise",
                                  "one slice of `outer` positions instead: the same softmax of one element each",
                                  ("sse41", "avx2"))
SOFTMAX16B_PAIR_TAIL = Route("softmax16b-avx512-pair-slices-tail-unwritten", "elementwise",
                             "the slices in two calls, the first ending 8 slices past the last whole 16",
                             ("avx512bw", "avx512vnni"))
LRN_NHWC_SMALL_CHANNELS = Route("lrn-nhwc-small-channels", "elementwise", "NHWC computed through NCHW")
LRN_NHWC_HALF2_WINDOW = Route("lrn-nhwc-half2-channel1-window", "elementwise", "NHWC computed through NCHW")
IP32F_GEMM_READS_C = Route("ip32f-base-gemm-reads-c", "inner_product", "the output zeroed before Forward")
IP32F_TRANSB_M1_IDENTITY = Route("ip32f-transb-m1-identity-uses-setparams-weight", "inner_product",
                                 "each call's B handed to SetParams before Forward, NULL after")
IP32F_N1_TRANSB_CONST_BIAS = Route("ip32f-n1-transb-const-bias-nan", "inner_product",
                                   "the context created with transB = 0 (a (1, K) B is the same memory as (K, 1))")
IP32F_TRANSB_READS_BEFORE_B = Route("ip32f-transb-reads-before-b", "inner_product",
                                    "B handed over behind B_GUARD zero floats")
CONV32F_GEMM_READS_DST = Route("CONV32F-BASE-GEMM-READS-DST", "convolution", "the output zeroed before Forward")
CONV32F_GEMMNT_READS_BEFORE_SRC = Route("CONV32F-GEMMNT-READS-BEFORE-SRC", "convolution",
                                        "src of GemmNT contexts handed over behind SRC_GUARD zero floats")
CONV32F_ONE_CHANNEL_WIDE_KERNEL = Route("CONV32F-AVX512-DIRECTNCHW-ONE-CHANNEL-WIDE-KERNEL-CRASH", "convolution",
                                        "a second output channel of zero weights added, dropped from the result")
CONV32F_ONE_CHANNEL_NON_SQUARE = Route("CONV32F-AVX512-DIRECTNCHW-ONE-CHANNEL-NON-SQUARE", "convolution",
                                       "a second output channel of zero weights added, dropped from the result")
CONV32F_IM2COL_MIDDLE_GATHER = Route("CONV32F-AVX512-GEMMNN-IM2COL-MIDDLE-GATHER", "convolution",
                                     "NCHW src copied between its left and right zero pads; the context has none")
IP32F_AVX2_RESTRICT_RANGE_INVERTED = Route("ip32f-avx2-restrict-range-inverted-tail", "inner_product",
                                           "inverted bounds given as (upper, upper): every output is upper either way")
IP32F_TRANSB_M1_ACTIVATION_READS_BEFORE_B = Route("ip32f-transb-m1-activation-reads-before-b", "inner_product",
                                                  "B handed over behind B_GUARD zero floats")
CONV32F_GEMMNT_NCHW_1X1_PAD = Route("CONV32F-GEMMNT-NCHW-1X1-PAD", "convolution",
                                    "NCHW src copied between its zero pads on all four sides; the context has none")
CONV32F_STRIDE3_ONE_INPUT_CHANNEL = Route("CONV32F-AVX512-DIRECTNCHW-STRIDE3-ONE-INPUT-CHANNEL-CRASH", "convolution",
                                          "a second input channel of zeros in each group, of zero weights")
CONV32F_NHWC_GROUPED_WHOLE_IMAGE = Route("CONV32F-GEMMNN-NHWC-GROUPED-WHOLE-IMAGE-KERNEL", "convolution",
                                         "the context created with stride 2: its one output is the same")

ROUTES = (MAX32F_NHWC_SMALL_CHANNELS, MAX32F_SOLID2X2_TAIL, MAX32F_NCHW_SPECIAL_KERNELS,
          LRN_NHWC_SMALL_CHANNELS, LRN_NHWC_HALF2_WINDOW, SOFTMAX32F_SINGLE_ELEMENT, SOFTMAX16B_SINGLE_ELEMENT,
          SOFTMAX16B_PAIR_TAIL,
          IP32F_GEMM_READS_C, IP32F_TRANSB_M1_IDENTITY, IP32F_N1_TRANSB_CONST_BIAS, IP32F_TRANSB_READS_BEFORE_B,
          IP32F_TRANSB_M1_ACTIVATION_READS_BEFORE_B, IP32F_AVX2_RESTRICT_RANGE_INVERTED,
          CONV32F_GEMM_READS_DST, CONV32F_GEMMNT_READS_BEFORE_SRC, CONV32F_ONE_CHANNEL_WIDE_KERNEL,
          CONV32F_ONE_CHANNEL_NON_SQUARE, CONV32F_IM2COL_MIDDLE_GATHER, CONV32F_GEMMNT_NCHW_1X1_PAD,
          CONV32F_STRIDE3_ONE_INPUT_CHANNEL, CONV32F_NHWC_GROUPED_WHOLE_IMAGE)


# -- library properties that are not defects ----------------------------------------------------------------------
def serialises_context_calls(library: Any) -> bool:
    """Whether calls on one convolution context must not overlap: upstream's Forward and Info write into the
    context (Forward grows its lazy buffer and GEMM statistics, Info rewrites its string); the bundled library's
    Forward only reads it when it is given a scratch buffer."""
    return bool(library.kind != _BUNDLED)


# -- helpers of the routes ----------------------------------------------------------------------------------------
def behind_zeros(array: np.ndarray, floats: int) -> np.ndarray:
    """`array`'s float32 values in a new C-contiguous array preceded by `floats` zeros (read as zero, never NaN)."""
    storage = np.zeros(array.size + floats, np.float32)
    copy = storage[floats:].reshape(array.shape)
    copy[...] = array
    return copy


#: Floats before each operand of a transposed-B inner product that upstream may read: A, and B whether constant or
#: per call (see :func:`upstream_reads_before_b`).
B_GUARD = 4


def behind_gemm_guard(operand: np.ndarray) -> np.ndarray:
    """`operand`'s values behind :data:`B_GUARD` zeros (the product reads them as zero)."""
    return behind_zeros(operand, B_GUARD)


_B_GUARD_ROUTES = (IP32F_TRANSB_READS_BEFORE_B, IP32F_TRANSB_M1_ACTIVATION_READS_BEFORE_B)


def upstream_reads_before_b(M: int, K: int, trans_b: bool, activated: bool = False,
                            routes: frozenset[Route] = frozenset(_B_GUARD_ROUTES)) -> bool:
    """Whether upstream's Forward reads up to 3 floats before a non-constant B, for the defects in `routes`
    (v7.1.162, SSE4.1/AVX2/AVX-512 objects); `activated`: the activation is not the identity.

    Swept with NaN placed before B: transB and K in {1, 2, 3, 5, 6, 7} among K = 1..69, where it reads the
    4 - K % 4 floats before B, for every N, with M >= 2, and with M = 1 under an activation (M = 1 with the identity
    takes the path of ip32f-transb-m1-identity-uses-setparams-weight, which reads SetParams' weight instead).
    """
    if not (trans_b and K < 8 and K % 4 != 0):
        return False
    if M >= 2:
        return IP32F_TRANSB_READS_BEFORE_B in routes
    return activated and IP32F_TRANSB_M1_ACTIVATION_READS_BEFORE_B in routes


def b_guard_route(library: Any, M: int, K: int, trans_b: bool, activated: bool) -> bool:
    """Whether a per-call B of an inner product on `library` must reach it behind :data:`B_GUARD` zeros."""
    taken = taken_among(library, _B_GUARD_ROUTES)
    return bool(taken) and upstream_reads_before_b(M, K, trans_b, activated, taken)


def softmax_dims(library: Any, bf16: bool, outer: int, count: int, inner: int) -> tuple[int, int, int]:
    """The (outer, count, inner) to give `library`'s softmax. Upstream's SSE4.1 and AVX2 kernels for one-element
    slices (count == inner == 1) write outside dst from four of them on; as one slice of `outer` inner positions the
    softmax is the same (each element alone) and takes the kernel for inner > 1."""
    if count == 1 and inner == 1 and outer >= 4:
        route = SOFTMAX16B_SINGLE_ELEMENT if bf16 else SOFTMAX32F_SINGLE_ELEMENT
        if route.taken(library):
            return 1, 1, outer
    return outer, count, inner


def softmax16b_parts(library: Any, outer: int, count: int, inner: int) -> tuple[tuple[int, int], ...]:
    """(first slice, slices) of each call that computes `outer` slices of bf16 softmax on `library`. Upstream's
    AVX-512 kernel for two-element slices (count == 2, inner == 1) takes them 16 to a register and, of the last
    outer % 16, reads and writes only the first 8: a call whose last slices are at most 8 past a whole 16 is right,
    so from 9 left over the slices go in two calls, the second with the rest (fewer than 8)."""
    if count == 2 and inner == 1 and outer % 16 > 8 and SOFTMAX16B_PAIR_TAIL.taken(library):
        cut = outer - outer % 16 + 8
        return ((0, cut), (cut, outer - cut))
    return ((0, outer),)


def ip32f_activation_params(library: Any, activation: int, params: Any) -> Any:
    """The activation params to give `library`'s inner product. With restrict_range's lower above its upper,
    min(max(lower, x), upper) is upper for every x; upstream's AVX2 build gives lower in the columns its vector
    loop leaves to the scalar remainder, and (upper, upper) gives upper in both."""
    if (activation == int(Activation.RESTRICT_RANGE) and params is not None and params[0] > params[1]
            and IP32F_AVX2_RESTRICT_RANGE_INVERTED.taken(library)):
        return np.array([params[1], params[1]], np.float32)
    return params


_LRN_ROUTES = (LRN_NHWC_SMALL_CHANNELS, LRN_NHWC_HALF2_WINDOW)


def upstream_lrn_is_wrong(channels: int, half: int, routes: frozenset[Route] = frozenset(_LRN_ROUTES)) -> bool:
    """Whether upstream's NHWC LRN gets these channels wrong, for the defects in `routes`.

    With fewer than ``2*half + 1`` channels its window reads neighbouring pixels (lrn-nhwc-small-channels). With
    ``half == 2`` the SSE4.1, AVX2 and AVX-512BW kernels (vectors of F = 4, 8, 16 floats, taken from ``F + 2``
    channels on) finish a pixel with a vector ending at ``channels - 2``; for ``channels == F + 3`` it starts at
    channel 1, whose window then includes the float before the pixel (the previous pixel's last channel, or memory
    before ``src``).
    """
    return ((LRN_NHWC_SMALL_CHANNELS in routes and channels < 2 * half + 1)
            or (LRN_NHWC_HALF2_WINDOW in routes and half == 2 and channels in (7, 11, 19)))


def lrn_route(library: Any, layout: str, channels: int, half: int) -> bool:
    """Whether an LRN call on `library` must go through NCHW."""
    if layout != "nhwc":
        return False
    taken = taken_among(library, _LRN_ROUTES)
    return bool(taken) and upstream_lrn_is_wrong(channels, half, taken)


_NCHW, _NHWC = 0, 1  # SimdTensorFormatType values


_MAX32F_ROUTES = (MAX32F_NHWC_SMALL_CHANNELS, MAX32F_SOLID2X2_TAIL, MAX32F_NCHW_SPECIAL_KERNELS)


def upstream_max32f_route(c: int, ac: Any, ay: Any, ax: Any, fmt: int,
                          routes: frozenset[Route] = frozenset(_MAX32F_ROUTES)) -> tuple[str, int]:
    """How a Max32f call avoids the defects in `routes` (the catalogue's max32f-* entries); `ac`, `ay`, `ax` are
    pooling's axes.

    Returns ``("direct", c)``, ``("pad_channels", padded_c)`` (NHWC: zero-pad channels to `padded_c`) or
    ``("via_nhwc", 0)`` (NCHW: transpose, pool in NHWC, transpose back). Only the 2D path has these defects.
    The SIMD width F of the upstream build is assumed to be the smallest (4) or largest (16) that makes a
    condition true, so the route is safe whatever ISA upstream dispatches to.
    """
    two_d = ac.kernel == 1 and ac.stride == 1 and ac.pad == 0 and ac.out == ac.size
    if not two_d:
        return "direct", c
    k, s, p = (ay.kernel, ax.kernel), (ay.stride, ax.stride), (ay.pad, ax.pad)
    if fmt == _NHWC:
        padded = c
        if MAX32F_NHWC_SMALL_CHANNELS in routes and c < 8:  # SSE4.1 (F=4) and AVX2 (F=8) write nothing below F
            padded = 16
        if MAX32F_SOLID2X2_TAIL in routes and k == (2, 2) and s == (1, 1) and p == (0, 0) \
                and ay.out == ay.size - 1 and ax.out == ax.size - 1 and (padded * ax.out) % 16:
            # the AVX-512 Solid2x2 kernel skips the last (srcC*dstW % 16) outputs of each row
            step = 16 // math.gcd(ax.out, 16)
            padded = -(-padded // step) * step
        return ("pad_channels", padded) if padded != c else ("direct", c)
    if MAX32F_NCHW_SPECIAL_KERNELS in routes:
        # The NCHW special kernels (3x3/s1, 2x2/s2, 3x3/s2) ignore the pads and the output size and write past
        # dst. Predicting exactly when upstream takes them proved unreliable (a sweep of small shapes against
        # v7.1.162 still corrupted the heap with a geometry-based predicate), so every 2D NCHW call goes through
        # NHWC, which has the same per-channel scan order and so the same bits.
        return "via_nhwc", 0
    return "direct", c


def max32f_route(library: Any, c: int, ac: Any, ay: Any, ax: Any, fmt: int) -> tuple[str, int]:
    """:func:`upstream_max32f_route` for the defects that `library` has (none for the bundled library)."""
    taken = taken_among(library, _MAX32F_ROUTES)
    return upstream_max32f_route(c, ac, ay, ax, fmt, taken) if taken else ("direct", c)


_CONV32F_ROUTES = (CONV32F_ONE_CHANNEL_WIDE_KERNEL, CONV32F_ONE_CHANNEL_NON_SQUARE, CONV32F_IM2COL_MIDDLE_GATHER,
                   CONV32F_GEMMNT_NCHW_1X1_PAD, CONV32F_STRIDE3_ONE_INPUT_CHANNEL, CONV32F_NHWC_GROUPED_WHOLE_IMAGE)
#: Upstream's NCHW GemmNT takes group-1 images smaller than this on both axes.
_GEMMNT_NCHW_SIZE = 6

#: Floats per vector of the AVX-512 im2col whose middle vectors gather unmasked (see :func:`upstream_conv32f_route`).
_IM2COL_F = 16


@dataclass(frozen=True)
class ConvolutionRoute:
    """How a convolution context is created and run around upstream defects (both False: directly)."""

    zero_channel: bool = False  # one more output channel, of zero weights, bias and slope; dropped from the result
    explicit_x_pad: bool = False  # NCHW src copied between its left and right zero pads; the context gets none
    explicit_y_pad: bool = False  # NCHW src copied between its top and bottom zero pads; the context gets none
    zero_input_channel: bool = False  # NCHW, one input channel per group: each group gets a second one of zeros
    context_stride: tuple[int, int] | None = None  # the context's stride where it differs from the caller's


def upstream_conv32f_route(layout: str, src_c: int, dst_c: int, src_h: int, src_w: int, kernel: tuple[int, int],
                           stride: tuple[int, int], dilation: tuple[int, int], pad: tuple[int, int, int, int],
                           group: int, routes: frozenset[Route] = frozenset(_CONV32F_ROUTES)) -> ConvolutionRoute:
    """The route of a convolution (`pad` is top, left, bottom, right) around the defects in `routes`.

    Upstream's SIMD objects send one input and one output channel at stride 1 to DirectNchw, which has no kernel
    wider than 5 at AVX-512 or 3 at AVX2 (a NULL call) and treats every kernel as square; with two output
    channels the library chooses by the usual rules. Its AVX-512 GemmNN im2col (strided or dilated NCHW) gathers the vectors between
    the first and the last of an output row unmasked, so a tap of theirs in the left or right pad reads outside
    the row; with the pads in src itself no tap is outside it. Its NCHW GemmNT (group 1, images under 6x6) skips
    the im2col of 1x1 kernels as if they had no pad, so a padded one reads outside src; with the pads in src the
    context has none. Its AVX-512 DirectNchw for one input channel per group has no 4x4 or 5x5 kernel at stride
    3 past one vector of outputs (a crash); with a second input channel of zeros per group the context takes the
    multi-channel kernel. Its GemmNN takes an NHWC kernel that covers the whole image as needing no im2col, which
    is wrong when groups interleave in the channels; at stride 2 the one output is the same and im2col is done.
    The routes are taken at every ISA of the affected versions: the ISA upstream dispatches to is not known
    before Init.
    """
    k_y, k_x = kernel
    one_channel = src_c == 1 and dst_c == 1 and stride == (1, 1) and dilation == (1, 1)
    zero_channel = one_channel and ((CONV32F_ONE_CHANNEL_WIDE_KERNEL in routes and k_x > 3)
                                    or (CONV32F_ONE_CHANNEL_NON_SQUARE in routes and k_y != k_x))
    explicit_x_pad = False
    if CONV32F_IM2COL_MIDDLE_GATHER in routes and layout == "nchw" and stride[0] * stride[1] * dilation[0] \
            * dilation[1] != 1:
        left, right, s_x, d_x = pad[1], pad[3], stride[1], dilation[1]
        dst_w = (src_w + left + right - d_x * (k_x - 1) - 1) // s_x + 1
        middle = range(_IM2COL_F, -(-dst_w // _IM2COL_F) * _IM2COL_F - _IM2COL_F)  # columns of the middle vectors
        explicit_x_pad = any(not 0 <= x * d_x - left + dx * s_x < src_w for x in range(k_x) for dx in middle)
    gemmnt_1x1_pad = (CONV32F_GEMMNT_NCHW_1X1_PAD in routes and layout == "nchw" and group == 1 and kernel == (1, 1)
                      and any(pad) and src_h < _GEMMNT_NCHW_SIZE and src_w < _GEMMNT_NCHW_SIZE)
    dst_w = (src_w + pad[1] + pad[3] - dilation[1] * (k_x - 1) - 1) // stride[1] + 1
    zero_input_channel = (CONV32F_STRIDE3_ONE_INPUT_CHANNEL in routes and layout == "nchw" and src_c == group
                          and kernel in ((4, 4), (5, 5)) and stride == (3, 3) and dilation == (1, 1)
                          and dst_w > _IM2COL_F)
    whole_image = (CONV32F_NHWC_GROUPED_WHOLE_IMAGE in routes and layout == "nhwc" and group > 1
                   and not src_c == dst_c == group and kernel == (src_h, src_w) and kernel != (1, 1)
                   and stride == (1, 1) and dilation == (1, 1) and not any(pad))
    return ConvolutionRoute(zero_channel, explicit_x_pad or gemmnt_1x1_pad, gemmnt_1x1_pad, zero_input_channel,
                            (2, 2) if whole_image else None)


def conv32f_route(library: Any, layout: str, src_c: int, dst_c: int, src_h: int, src_w: int,
                  kernel: tuple[int, int], stride: tuple[int, int], dilation: tuple[int, int],
                  pad: tuple[int, int, int, int], group: int) -> ConvolutionRoute:
    """:func:`upstream_conv32f_route` for the defects that `library` has (none for the bundled library)."""
    taken = taken_among(library, _CONV32F_ROUTES)
    if not taken:
        return ConvolutionRoute()
    return upstream_conv32f_route(layout, src_c, dst_c, src_h, src_w, kernel, stride, dilation, pad, group, taken)


@overload
def with_zero_channel(array: np.ndarray, axis: int) -> np.ndarray: ...
@overload
def with_zero_channel(array: None, axis: int) -> None: ...
def with_zero_channel(array: np.ndarray | None, axis: int) -> np.ndarray | None:
    """`array` with one more slice of zeros at the end of `axis` (None stays None)."""
    if array is None:
        return None
    shape = list(array.shape)
    shape[axis] = 1
    return np.concatenate([array, np.zeros(shape, np.float32)], axis=axis)


def with_zero_input_channels(array: np.ndarray, axis: int) -> np.ndarray:
    """`array` with a slice of zeros after each slice along `axis` (NCHW src: axis 1; OIHW weights: axis 1)."""
    shape = list(array.shape)
    shape[axis] *= 2
    doubled = np.zeros(shape, np.float32)
    index: list[slice] = [slice(None)] * array.ndim
    index[axis] = slice(0, None, 2)
    doubled[tuple(index)] = array
    return doubled


def with_pad(src: np.ndarray, top: int, left: int, bottom: int, right: int) -> np.ndarray:
    """NCHW `src` (any leading axes) with `top` and `bottom` rows and `left` and `right` columns of zeros."""
    h, w = src.shape[-2:]
    padded = np.zeros((*src.shape[:-2], h + top + bottom, w + left + right), np.float32)
    padded[..., top:top + h, left:left + w] = src
    return padded
