"""Cases of the pooling family: Average, Max32f (2D and 3D), Max16b, Max8u.

Grids: upstream's shape tables (src/Test/TestSynetPooling.cpp) (ceil mode, both layouts here), an ONNX-style grid of
kernels x strides x begin/end pads x floor/ceil, channel counts 1..67, widths that cross every vector width on the
NCHW path, batches, 3D channel pooling, and the edge group (NaN order, -inf floor, bf16 specials). Profiles: `full`
runs everything, `ci` a fixed sample of every grid, `smoke` a handful.

Upstream-defect cases (``defect`` != ""): ``direct`` ones call the C function exactly as upstream's failing call
does (no routing, pads >= kernel allowed), with guard zones after src and dst so that out-of-bounds writes are
detected instead of corrupting the process; they pass on the bundled library and are catalogued in
``simdbind/conformance/families/pooling/deviations.json`` for upstream builds. Every such parameter set also has a routed case
through the public API, which must pass on every library.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Iterable, Sequence

import numpy as np

import simdbind
from simdbind.conformance import values
from simdbind.conformance.model import F, Case, Field, Function, register
from simdbind.conformance.families.pooling import reference
from simdbind.conformance.tolerance import EXACT, Tolerance
from simdbind.conformance.work import Work, elements, itemsize
from simdbind.errors import UpstreamDefectError

if TYPE_CHECKING:
    from hypothesis.strategies import DrawFn, SearchStrategy
    from simdbind.library import Library

ALL = ("ci", "full")
FULL = ("full",)
LAYOUTS = ("nchw", "nhwc")

# Upstream's tables (C, H, W, kernel, stride, pad_begin, pad_end), TestSynetPooling.cpp; ceil mode.
AVERAGE_TABLE = [(128, 54, 96, 2, 2, 0, 0), (128, 27, 48, 2, 2, 0, 0), (128, 13, 24, 2, 2, 0, 0),
                 (7, 54, 40, 2, 2, 0, 0), (16, 33, 33, 3, 1, 1, 1), (16, 22, 22, 3, 2, 0, 1),
                 (32, 99, 99, 3, 1, 1, 1), (32, 46, 46, 3, 2, 0, 1)]
MAX32F_TABLE = [(512, 5, 60, 2, 1, 0, 0), (10, 238, 133, 2, 2, 0, 0), (28, 99, 99, 3, 1, 1, 1),
                (32, 46, 46, 3, 2, 0, 1), (64, 21, 21, 3, 2, 1, 1)]
MAX16B_TABLE = MAX32F_TABLE
MAX8U_TABLE = MAX32F_TABLE[1:]
# Upstream's disabled 3D table (C, H, W, kernel (c, y, x), stride (c, y, x)), zero pads; the first entry is
# adapted: its x pad (1 with an x kernel of 1) is pad >= kernel, which simdbind refuses (upstream's window wraps then).
MAX3D_TABLE = [(101, 59, 99, (2, 3, 1), (3, 2, 1), ((0, 0), (1, 1), (0, 0))),
               (128, 19, 90, (1, 3, 3), (1, 2, 1), None), (256, 9, 88, (1, 3, 3), (1, 2, 1), None),
               (64, 21, 92, (1, 3, 3), (1, 1, 1), None), (128, 19, 90, (2, 3, 3), (2, 2, 1), None),
               (256, 9, 88, (4, 3, 3), (4, 2, 1), None)]

ONNX_KERNELS = [(1, 1), (2, 2), (3, 3), (2, 3), (5, 5), (3, 1)]
ONNX_STRIDES = [(1, 1), (2, 2), (3, 3), (1, 2)]
CHANNELS = tuple(range(1, 68))
CI_CHANNELS = (1, 3, 4, 5, 8, 9, 16, 17, 33, 67)
WIDTHS = tuple(range(1, 71)) + (127, 128, 129, 140, 300)
CI_WIDTHS = (1, 7, 8, 16, 17, 33, 40, 64, 67, 129, 140)

# Upstream Max32f defect parameter sets (the catalogue's max32f-* entries): (defect, layout, (C, H, W), kernel, stride,
# begin pads, end pads, output (H, W)).
MAX32F_DEFECTS = [
    ("nhwc-small-channels", "nhwc", (3, 8, 9), (3, 3), (1, 1), (1, 1), (1, 1), (8, 9)),
    ("solid2x2-tail", "nhwc", (3, 5, 7), (2, 2), (1, 1), (0, 0), (0, 0), (4, 6)),
    ("nchw-special-2x2s2-floor", "nchw", (2, 9, 40), (2, 2), (2, 2), (0, 0), (0, 0), (4, 20)),
    ("nchw-special-3x3s2-floor", "nchw", (2, 6, 40), (3, 3), (2, 2), (0, 0), (0, 0), (2, 19)),
    ("nchw-special-3x3s1-pad0", "nchw", (2, 10, 40), (3, 3), (1, 1), (0, 0), (2, 2), (10, 40)),
    ("nchw-special-3x3s1-h1", "nchw", (2, 1, 40), (3, 3), (1, 1), (1, 1), (1, 1), (1, 40)),
]


def _sampled(key: str, every: int) -> bool:
    """A fixed, order-independent 1-in-`every` sample for the ci profile."""
    return int.from_bytes(hashlib.blake2b(key.encode(), digest_size=4).digest(), "little") % every == 0


def bf16_bits(values: np.ndarray) -> np.ndarray:
    """float32 -> bf16 bit patterns with round-to-nearest-even (upstream's Float32ToBFloat16)."""
    u = values.astype(np.float32).view(np.uint32).astype(np.uint64)
    return (((u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFFFFFF) >> 16).astype(np.uint16)


#: The descriptor fields of every pooling function; Average adds ``exclude``, Max32f the channel window.
POOLING_FIELDS = (F("layout", "name"), F("batch", "int", 1), F("channels", "int"), F("height", "int"),
                  F("width", "int"), F("kernel", "dims", names=("ky", "kx")), F("stride", "dims", names=("sy", "sx")),
                  F("pad", "list", (0, 0, 0, 0), names=("pad_top", "pad_left", "pad_bottom", "pad_right")),
                  F("ceil", "bool"))
POOLING_TAIL = (F("special", "name", ""), F("defect", "name", ""), F("direct", "bool", False),
                F("out", "dims", (0, 0), names=("out_h", "out_w")), F("group", "name"))


class _Pooling(Function):
    family = "pooling"
    dtype = "float32"
    fields: ClassVar[tuple[Field, ...]] = POOLING_FIELDS + POOLING_TAIL

    # -- case construction ---------------------------------------------------------------------------------------
    # -- case construction ---------------------------------------------------------------------------------------
    def _case(self, layout: str, c: int, h: int, w: int, kernel: Sequence[int], stride: Sequence[int],
              pads: Sequence[tuple[int, int]], ceil: bool, profiles: tuple[str, ...], *, batch: int = 1,
              exclude: bool = True, channel: tuple[int, int, tuple[int, int]] | None = None, special: str = "",
              defect: str = "", direct_out: tuple[int, int] | None = None, group: str = "main") -> Case:
        (pt, pb), (pl, pr) = pads
        kc, sc, (pcb, pce) = channel if channel else (1, 1, (0, 0))
        params = {"channels": c, "height": h, "width": w, "batch": batch, "ky": kernel[0], "kx": kernel[1],
                  "sy": stride[0], "sx": stride[1], "pad_top": pt, "pad_bottom": pb, "pad_left": pl,
                  "pad_right": pr, "ceil": ceil, "exclude": exclude, "kc": kc, "sc": sc, "pc_begin": pcb,
                  "pc_end": pce, "special": special, "defect": defect, "direct": direct_out is not None,
                  "out_h": direct_out[0] if direct_out else 0, "out_w": direct_out[1] if direct_out else 0}
        if self.name != "pooling_average":
            del params["exclude"]
        if self.name != "pooling_max32f":
            for name in ("kc", "sc", "pc_begin", "pc_end"):
                del params[name]
        return self.case(params, layout=layout, group=group, profiles=profiles)

    def _grids(self, table: Iterable[tuple[int, int, int, int, int, int, int]], *,
               exclude_values: tuple[bool, ...] = (True,)) -> Iterable[Case]:
        # The tables give square kernels and strides as ints, the other grids as (y, x) pairs.
        k: int | tuple[int, int]
        s: int | tuple[int, int]
        # Upstream's table, ceil mode, both layouts.
        for i, (c, h, w, k, s, pb, pe) in enumerate(table):
            for layout in LAYOUTS:
                for exclude in exclude_values:
                    on_ci = (i + LAYOUTS.index(layout) + int(exclude)) % 2 == 0
                    profiles = ("smoke",) + ALL if (i == 0 and layout == "nhwc" and exclude) else \
                        (ALL if on_ci else FULL)
                    yield self._case(layout, c, h, w, (k, k), (s, s), ((pb, pe), (pb, pe)), True, profiles,
                                     exclude=exclude)
        # ONNX-style grid on small odd images.
        for k in ONNX_KERNELS:
            pad_options = {((0, 0), (0, 0)), ((k[0] - 1, k[0] - 1), (k[1] - 1, k[1] - 1))}
            if min(k) > 1:
                pad_options |= {((1, 1), (1, 1)), ((0, 1), (1, 0))}
            for s in ONNX_STRIDES:
                for pads in sorted(pad_options):
                    for ceil in (False, True):
                        for layout in LAYOUTS:
                            for exclude in exclude_values:
                                c, h, w = (5, 11, 13) if layout == "nchw" else (13, 9, 10)
                                key = f"{self.name}{k}{s}{pads}{ceil}{layout}{exclude}"
                                yield self._case(layout, c, h, w, k, s, pads, ceil,
                                                 ALL if _sampled(key, 6) else FULL, exclude=exclude)
        # Channel counts 1..67 (NHWC vector bodies and tails; NCHW planes).
        for layout in LAYOUTS:
            for c in CHANNELS:
                on_ci = c in CI_CHANNELS if layout == "nhwc" else c in (1, 3, 17)
                yield self._case(layout, c, 7, 9, (3, 3), (2, 2), ((1, 1), (1, 1)), False,
                                 ALL if on_ci else FULL, exclude=exclude_values[-1])
        # NCHW widths: stride 1 and 2 vector paths, borders and overlapping last vectors, up to 64-lane vectors.
        for w in WIDTHS:
            for k, s, pads in (((3, 3), (1, 1), ((1, 1), (1, 1))), ((2, 2), (2, 2), ((0, 0), (0, 1))),
                               ((3, 3), (2, 2), ((1, 1), (0, 2)))):
                if w + sum(pads[1]) < k[1]:
                    continue
                yield self._case("nchw", 2, 4, w, k, s, pads, s == (2, 2), ALL if w in CI_WIDTHS else FULL,
                                 exclude=exclude_values[0])
        # A 4-wide kernel: past the unrolled 2- and 3-wide window paths, through the general one.
        for layout in LAYOUTS:
            yield self._case(layout, 5, 11, 40, (4, 4), (1, 1), ((1, 1), (2, 2)), True, ALL,
                             exclude=exclude_values[0])
        # Batches.
        for layout in LAYOUTS:
            for exclude in exclude_values:
                yield self._case(layout, 6, 8, 10, (3, 3), (2, 2), ((1, 1), (1, 1)), True, ALL, batch=3,
                                 exclude=exclude)
                yield self._case(layout, 1, 5, 5, (2, 2), (1, 1), ((0, 0), (0, 0)), False, FULL, batch=2,
                                 exclude=exclude)
        # Direct calls with pad >= kernel: the contract's empty window versus upstream's wrap (catalogue:
        # pooling-pad-ge-kernel-wraps).
        for layout in LAYOUTS:
            for exclude in exclude_values:
                yield self._case(layout, 3, 6, 7, (2, 2), (1, 1), ((3, 0), (3, 0)), False, ALL, exclude=exclude,
                                 defect="pad-wrap", direct_out=(8, 9))

    def _classes_cases(self) -> Iterable[Case]:
        """Edge: x holding every class (values.holding_every_class: the first pixels' channels in NHWC, the first
        row in NCHW, and again the last ones), so that windows meet several classes at once; a maximum has no
        order of summation to fear."""
        for i, (c, h, w, kernel, stride, pads, ceil) in enumerate(CLASSES_SHAPES):
            for layout in LAYOUTS:
                yield self._case(layout, c, h, w, kernel, stride, pads, ceil, ALL if i == 0 else FULL,
                                 special="classes", group="edge")

    #: Input kinds of the edge group the space draws from ("" = the main group's data).
    specials: tuple[str, ...] = ("",)

    def space(self) -> SearchStrategy[Case]:
        """Public-API calls over the documented space: any layout, batch, channel count, image size, kernel and stride
        per axis, begin/end pads per axis below the kernel (a larger pad wraps upstream's window), floor or ceil;
        Average both exclude modes, Max32f any channel window; the edge group's special inputs."""
        from hypothesis import strategies as st

        @st.composite
        def draw(draw: DrawFn) -> Case:
            ky, kx = draw(st.integers(1, 7)), draw(st.integers(1, 7))
            pads = [draw(st.integers(0, k - 1)) for k in (ky, ky, kx, kx)]  # top, bottom, left, right
            height = max(draw(st.integers(1, 20)), ky - pads[0] - pads[1])
            width = max(draw(st.integers(1, 70)), kx - pads[2] - pads[3])
            channels = draw(st.integers(1, 70))
            params = {"channels": channels, "height": height, "width": width, "batch": draw(st.integers(1, 3)),
                      "ky": ky, "kx": kx, "sy": draw(st.integers(1, 4)), "sx": draw(st.integers(1, 4)),
                      "pad_top": pads[0], "pad_bottom": pads[1], "pad_left": pads[2], "pad_right": pads[3],
                      "ceil": draw(st.booleans()), "special": draw(st.sampled_from(self.specials)), "defect": "",
                      "direct": False, "out_h": 0, "out_w": 0}
            if self.name == "pooling_average":
                params["exclude"] = draw(st.booleans())
            if self.name == "pooling_max32f":
                kc = draw(st.integers(1, 5))
                pc = (draw(st.integers(0, kc - 1)), draw(st.integers(0, kc - 1)))
                params.update(kc=kc, sc=draw(st.integers(1, 3)), pc_begin=pc[0], pc_end=pc[1],
                              channels=max(channels, kc - sum(pc)))
            return self.case(params, layout=draw(st.sampled_from(LAYOUTS)),
                             group="edge" if params["special"] else "main")
        return draw()

    # -- running -------------------------------------------------------------------------------------------------
    def _geometry(self, case: Case
                  ) -> tuple[tuple[int, int], tuple[int, int], tuple[tuple[int, int], tuple[int, int]]]:
        p = case.params
        return ((p["ky"], p["kx"]), (p["sy"], p["sx"]),
                ((p["pad_top"], p["pad_bottom"]), (p["pad_left"], p["pad_right"])))

    def _out(self, case: Case, inputs: dict[str, Any]) -> np.ndarray:
        """The guarded ``out=`` of the public call: its output shape, the input's dtype."""
        p, size = case.params, simdbind.pooling_output_size
        c = size(p["channels"], p["kc"], p["sc"], p["pc_begin"], p["pc_end"], p["ceil"]) if "kc" in p \
            else p["channels"]
        h = size(p["height"], p["ky"], p["sy"], p["pad_top"], p["pad_bottom"], p["ceil"])
        w = size(p["width"], p["kx"], p["sx"], p["pad_left"], p["pad_right"], p["ceil"])
        image = (c, h, w) if case.layout == "nchw" else (h, w, c)
        return self.output(inputs, image if p["batch"] == 1 else (p["batch"],) + image, inputs["x"].dtype)

    def prepare(self, library: Any, case: Case, inputs: dict[str, Any]) -> Callable[[], np.ndarray]:
        """The wrapper call alone (geometry and output made once; bf16 comes out as the input's dtype, without
        run's uint16 view)."""
        p, x = case.params, inputs["x"]
        if p["direct"]:
            return super().prepare(library, case, inputs)
        kernel, stride, pads = self._geometry(case)
        out = self._out(case, inputs)
        arguments = dict(stride=stride, pad=pads, layout=case.layout, ceil_mode=p["ceil"], out=out, library=library)
        if self.name == "pooling_average":
            arguments["exclude_pad"] = p["exclude"]
            return lambda: simdbind.pooling_average(x, kernel, **arguments)
        if self.name == "pooling_max32f":
            arguments.update(kernel_c=p["kc"], stride_c=p["sc"], pad_c=(p["pc_begin"], p["pc_end"]))
        return lambda: simdbind.pooling_max(x, kernel, **arguments)

    def _shape(self, case: Case) -> tuple[int, ...]:
        p = case.params
        image = (p["channels"], p["height"], p["width"]) if case.layout == "nchw" else \
            (p["height"], p["width"], p["channels"])
        return image if p["batch"] == 1 else (p["batch"],) + image

    def _direct(self, library: Any, case: Case, x: np.ndarray, guard: int = 256) -> np.ndarray:
        """One image through the C function exactly as described by the case (begin pads, output size), with
        guard zones; raises UpstreamDefectError if anything was written past the end of dst."""
        p = case.params
        c, h, w = p["channels"], p["height"], p["width"]
        dh, dw = p["out_h"], p["out_w"]
        ctype = {"float32": "float[]", "bf16": "uint16_t[]", "uint8": "uint8_t[]"}[self.dtype]
        np_type = {"float32": np.float32, "bf16": np.uint16, "uint8": np.uint8}[self.dtype]
        flat = np.ascontiguousarray(x).view(np_type).ravel()
        src = np.zeros(flat.size + w * c + guard, np_type)
        src[:flat.size] = flat
        size = c * dh * dw
        dst = np.zeros(size + 2 * dw * c + guard, np_type)
        sentinel = {np.float32: np.float32(1234.5), np.uint16: np.uint16(0x1234), np.uint8: np.uint8(0xA5)}[np_type]
        dst[size:] = sentinel
        ffi = library.ffi
        s, d = ffi.from_buffer(ctype, src), ffi.from_buffer(ctype, dst, require_writable=True)
        fmt = 0 if case.layout == "nchw" else 1
        geometry = (p["ky"], p["kx"], p["sy"], p["sx"], p["pad_top"], p["pad_left"])
        if self.name == "pooling_average":
            library.function("SimdSynetPoolingAverage")(s, c, h, w, *geometry, d, dh, dw, p["exclude"], fmt)
        elif self.name == "pooling_max32f":
            library.function("SimdSynetPoolingMax32f")(
                s, c, h, w, 1, p["ky"], p["kx"], 1, p["sy"], p["sx"], 0, p["pad_top"], p["pad_left"],
                d, c, dh, dw, fmt)
        else:
            name = "SimdSynetPoolingMax16b" if self.name == "pooling_max16b" else "SimdSynetPoolingMax8u"
            library.function(name)(s, c, h, w, *geometry, d, dh, dw, fmt)
        if (dst[size:] != sentinel).any():
            raise UpstreamDefectError(
                f"{self.name}: the library wrote {int((dst[size:] != sentinel).sum())} elements past the end of dst")
        out = dst[:size].reshape((c, dh, dw) if fmt == 0 else (dh, dw, c))
        return out.view(x.dtype) if x.dtype != np_type else out.copy()

    def _direct_reference(self, case: Case, x: np.ndarray) -> np.ndarray:
        p = case.params
        kernel, stride, _ = self._geometry(case)
        pad = (p["pad_top"], p["pad_left"])
        out_hw = (p["out_h"], p["out_w"])
        if self.name == "pooling_average":
            return reference.average_image(x, kernel, stride, pad, out_hw, case.layout, p["exclude"])
        raw = x.view(np.uint16) if self.dtype == "bf16" else x
        result = reference.max_image(raw, kernel, stride, pad, out_hw, case.layout)
        return result.view(x.dtype) if self.dtype == "bf16" else result


#: The "classes" edge group's max pooling shapes: (channels, height, width, kernel, stride, pads, ceil); channel
#: counts past a vector with a tail (19 = 16 + 3), the 2x2/s2 NCHW path over 40 columns.
CLASSES_SHAPES = ((19, 7, 21, (3, 3), (1, 1), ((1, 1), (1, 1)), False),
                  (5, 9, 40, (2, 2), (2, 2), ((0, 1), (0, 1)), True))


def one_class_per_channel(x: np.ndarray, layout: str, dtype: str, rng: np.random.Generator) -> np.ndarray:
    """x (one image, or a batch of them) with the classes one per channel (values.class_lanes), the first set at
    each image's first pixel, the second (NHWC tail lanes) at its last: no window of a sum meets two of them (the
    image is wider and taller than a window), so no order of summation matters."""
    image = x.reshape((-1,) + x.shape[-3:])
    channel_axis = 1 if layout == "nchw" else 3
    for lane, value in values.class_lanes(dtype, rng):
        corner = 0 if lane < values.SECOND_SET else -1
        where: list[Any] = [slice(None), corner, corner, corner]
        where[channel_axis] = lane
        image[tuple(where)] = value
    return x


@register
class PoolingAverage(_Pooling):
    name = "pooling_average"
    symbols = ("SimdSynetPoolingAverage",)
    specials = ("", "inf_nan")
    fields = POOLING_FIELDS + (F("exclude", "bool"),) + POOLING_TAIL

    def grid(self) -> Iterable[Case]:
        yield from self._grids(AVERAGE_TABLE, exclude_values=(True, False))
        # Edge: +-inf and NaN propagate through the sum (their class does not depend on the summation order).
        for layout in LAYOUTS:
            yield self._case(layout, 9, 6, 7, (3, 3), (2, 2), ((1, 1), (1, 1)), True, ALL, special="inf_nan",
                             group="edge")
            # Edge: every class, one per channel and window (one_class_per_channel), both exclude modes; and 1x1
            # windows, whose averages are the values themselves: every class comes out.
            for exclude in (True, False):
                yield self._case(layout, values.CLASS_LANES, 6, 7, (3, 3), (2, 2), ((1, 1), (1, 1)), True,
                                 ALL if exclude else FULL, exclude=exclude, special="classes", group="edge")
            yield self._case(layout, values.CLASS_LANES, 6, 7, (1, 1), (1, 1), ((0, 0), (0, 0)), False, FULL,
                             special="classes", group="edge")

    def inputs(self, case: Case, rng: np.random.Generator) -> dict[str, Any]:
        x = rng.uniform(-1, 1, self._shape(case)).astype(np.float32)
        if case.params["special"] == "inf_nan":
            mask = rng.random(x.shape) < 0.15
            x[mask] = rng.choice(np.array([np.inf, -np.inf, np.nan], np.float32), int(mask.sum()))
        elif case.params["special"] == "classes":
            x = one_class_per_channel(x, case.layout, "float32", rng)
        return {"x": x}

    def run(self, library: Library, case: Case, inputs: dict[str, Any]) -> np.ndarray:
        if case.params["direct"]:
            return self._direct(library, case, inputs["x"])
        kernel, stride, pads = self._geometry(case)
        return simdbind.pooling_average(inputs["x"], kernel, stride=stride, pad=pads,
                                        exclude_pad=case.params["exclude"], layout=case.layout,
                                        ceil_mode=case.params["ceil"], out=self._out(case, inputs), library=library)

    def reference(self, case: Case, inputs: dict[str, Any]) -> np.ndarray:
        if case.params["direct"]:
            return self._direct_reference(case, inputs["x"])
        kernel, stride, pads = self._geometry(case)
        return reference.pooling_average(inputs["x"], kernel, stride, pads, case.layout, case.params["ceil"],
                                         case.params["exclude"])

    def tolerance(self, case: Case) -> Tolerance:
        # Inputs are in [-1, 1]. A float32 running sum of n <= ky*kx terms errs by at most u*n(n+1)/2 (u = 2^-24),
        # which the divisor (>= n) scales to u*(n+1)/2; the division (or upstream's multiply by 1/D) adds an ulp
        # or two.
        # The classes group's windows sum one value up to FLT_MAX with small ones: the same roundings, relative.
        area = case.params["ky"] * case.params["kx"]
        relative = (area + 4) * 2.0 ** -24 if case.params["special"] == "classes" else 0.0
        return Tolerance(abs=(area + 4) * 2.0 ** -24, rel=relative,
                         why="float32 summation in window order, then one division")


@register
class PoolingMax32f(_Pooling):
    name = "pooling_max32f"
    symbols = ("SimdSynetPoolingMax32f",)
    specials = ("", "nan", "neg_inf", "classes")
    fields = POOLING_FIELDS + (F("kc", "int", 1), F("sc", "int", 1),
                               F("pc", "list", (0, 0), names=("pc_begin", "pc_end"))) + POOLING_TAIL

    def grid(self) -> Iterable[Case]:
        yield from self._grids(MAX32F_TABLE)
        # The 3D table gives (c, y, x) kernels, strides and pads, the defect table (y, x) ones.
        k: tuple[int, ...]
        s: tuple[int, ...]
        pads: Sequence[tuple[int, int]] | None
        # 3D channel pooling: upstream's disabled table, then a small grid.
        for i, (c, h, w, k, s, pads) in enumerate(MAX3D_TABLE):
            pads = pads or ((0, 0), (0, 0), (0, 0))
            for layout in LAYOUTS:
                yield self._case(layout, c, h, w, k[1:], s[1:], pads[1:], True,
                                 ALL if (i + LAYOUTS.index(layout)) % 3 == 0 else FULL,
                                 channel=(k[0], s[0], pads[0]))
        for kc, sc, pc in ((2, 1, (0, 0)), (3, 2, (1, 1)), (3, 3, (0, 2)), (1, 2, (0, 0)), (5, 1, (2, 2))):
            for c in (1, 7, 17):
                for layout in LAYOUTS:
                    for ceil in (False, True):
                        if c + sum(pc) < kc:
                            continue
                        key = f"3d{kc}{sc}{pc}{c}{layout}{ceil}"
                        yield self._case(layout, c, 6, 19, (3, 2), (2, 1), ((1, 0), (0, 1)), ceil,
                                         ALL if _sampled(key, 4) else FULL, channel=(kc, sc, pc))
        # NHWC channel windows of 2 and 4 at their own stride over 16 channels or more: upstream's AVX-512 kernels
        # for them take channels in blocks of 8, 4, 2 and 1 vectors, then a tail (250 = 128 + 64 + 32 + 16 + 10).
        for kc, c in ((2, 250), (4, 252)):
            for ceil in (False, True):
                yield self._case("nhwc", c, 6, 19, (3, 2), (2, 1), ((1, 0), (0, 1)), ceil, FULL if ceil else ALL,
                                 channel=(kc, kc, (0, 0)))
        # Upstream Max32f defects (the catalogue's max32f-* entries): the direct call that shows each, and the routed
        # public call.
        for defect, layout, (c, h, w), k, s, pb, pe, out in MAX32F_DEFECTS:
            pads = ((pb[0], pe[0]), (pb[1], pe[1]))
            yield self._case(layout, c, h, w, k, s, pads, False, ALL, defect=defect, direct_out=out)
            yield self._case(layout, c, h, w, k, s, pads, False, ALL)
        # Edge: the NaN order of the fold and the -FLT_MAX floor under -inf (Max32f starts its maximum at -FLT_MAX).
        for layout in LAYOUTS:
            for special in ("nan", "neg_inf"):
                yield self._case(layout, 19, 7, 21, (3, 3), (1, 1), ((1, 1), (1, 1)), False, ALL,
                                 special=special, group="edge")
                yield self._case(layout, 5, 9, 40, (2, 2), (2, 2), ((0, 1), (0, 1)), True, ALL,
                                 special=special, group="edge")
            yield self._case(layout, 7, 6, 19, (3, 2), (2, 1), ((1, 0), (0, 1)), True, ALL,
                             channel=(3, 2, (1, 1)), special="neg_inf", group="edge")
        yield from self._classes_cases()

    def inputs(self, case: Case, rng: np.random.Generator) -> dict[str, Any]:
        x = rng.uniform(-1, 1, self._shape(case)).astype(np.float32)
        special = case.params["special"]
        if special == "nan":
            mask = rng.random(x.shape) < 0.2
            x[mask] = np.nan
        elif special == "neg_inf":
            mask = rng.random(x.shape) < 0.7
            x[mask] = -np.inf
        elif special == "classes":
            x = values.holding_every_class(x, "float32", rng)
        return {"x": x}

    def run(self, library: Library, case: Case, inputs: dict[str, Any]) -> np.ndarray:
        p = case.params
        if p["direct"]:
            return self._direct(library, case, inputs["x"])
        kernel, stride, pads = self._geometry(case)
        return simdbind.pooling_max(inputs["x"], kernel, stride=stride, pad=pads, layout=case.layout,
                                    ceil_mode=p["ceil"], kernel_c=p["kc"], stride_c=p["sc"],
                                    pad_c=(p["pc_begin"], p["pc_end"]), out=self._out(case, inputs), library=library)

    def reference(self, case: Case, inputs: dict[str, Any]) -> np.ndarray:
        p = case.params
        if p["direct"]:
            return self._direct_reference(case, inputs["x"])
        kernel, stride, pads = self._geometry(case)
        channel = None if (p["kc"], p["sc"], p["pc_begin"], p["pc_end"]) == (1, 1, 0, 0) else \
            (p["kc"], p["sc"], (p["pc_begin"], p["pc_end"]))
        return reference.pooling_max(inputs["x"], kernel, stride, pads, case.layout, p["ceil"], channel=channel)

    def tolerance(self, case: Case) -> Tolerance:
        return Tolerance(exact=True, why="a maximum is one of its inputs (or -FLT_MAX); NaN order is specified")


@register
class PoolingMax16b(_Pooling):
    name = "pooling_max16b"
    dtype = "bf16"
    symbols = ("SimdSynetPoolingMax16b",)
    specials = ("", "nan", "nan_after_inf", "nan_after_neg_inf", "neg_inf", "zeros", "zeros_negative", "classes")

    def grid(self) -> Iterable[Case]:
        yield from self._grids(MAX16B_TABLE)
        # 70 channels: two whole blocks of 32 and a tail, so that kernels folding NHWC channels in blocks meet
        # every special inside a block as well as in the tail
        for layout in LAYOUTS:
            for channels in (19, 70):
                for special in self.specials[1:-1]:  # the last, "classes", has shapes of its own
                    yield self._case(layout, channels, 7, 21, (3, 3), (1, 1), ((1, 1), (1, 1)), False, ALL,
                                     special=special, group="edge")
        yield from self._classes_cases()

    def inputs(self, case: Case, rng: np.random.Generator) -> dict[str, Any]:
        bits = bf16_bits(rng.uniform(-1, 1, self._shape(case)))
        special = case.params["special"]
        if special == "nan":
            mask = rng.random(bits.shape) < 0.2
            bits[mask] = rng.choice(np.array([0x7FC0, 0xFFC1, 0x7F81], np.uint16), int(mask.sum()))
        elif special in ("nan_after_inf", "nan_after_neg_inf"):  # few NaNs, all the pattern next to one infinity
            bits[rng.random(bits.shape) < 0.03] = 0x7F81 if special == "nan_after_inf" else 0xFF81
        elif special == "neg_inf":
            bits[rng.random(bits.shape) < 0.7] = 0xFF80
        elif special == "zeros":  # +0 and -0 only: the fold keeps the later of equal values
            bits = rng.choice(np.array([0x0000, 0x8000], np.uint16), bits.shape)
        elif special == "zeros_negative":  # +0 and -0 among negatives: a maximum of +0 or -0, whichever came later
            zeros = rng.choice(np.array([0x0000, 0x8000], np.uint16), bits.shape)
            bits = np.where(rng.random(bits.shape) < 0.4, zeros, bits | np.uint16(0x8000))
        elif special == "classes":
            bits = values.holding_every_class(bits, "bf16", rng)
        p = case.params
        if (p["channels"] + p["height"] + p["width"]) % 2:  # half the cases pass ml_dtypes.bfloat16, half raw bits
            try:
                import ml_dtypes

                return {"x": bits.view(ml_dtypes.bfloat16)}
            except ImportError:
                pass
        return {"x": bits}

    def run(self, library: Library, case: Case, inputs: dict[str, Any]) -> np.ndarray:
        if case.params["direct"]:
            return self._direct(library, case, inputs["x"]).view(np.uint16)
        kernel, stride, pads = self._geometry(case)
        return simdbind.pooling_max(inputs["x"], kernel, stride=stride, pad=pads, layout=case.layout,
                                    ceil_mode=case.params["ceil"], out=self._out(case, inputs),
                                    library=library).view(np.uint16)

    def reference(self, case: Case, inputs: dict[str, Any]) -> np.ndarray:
        x = inputs["x"].view(np.uint16)
        if case.params["direct"]:
            return self._direct_reference(case, x)
        kernel, stride, pads = self._geometry(case)
        return reference.pooling_max(x, kernel, stride, pads, case.layout, case.params["ceil"])

    def tolerance(self, case: Case) -> Tolerance:
        return Tolerance(exact=True, why="bf16 -> f32 is exact and the maximum is an input (or bf16(-FLT_MAX))")


@register
class PoolingMax8u(_Pooling):
    name = "pooling_max8u"
    dtype = "uint8"
    symbols = ("SimdSynetPoolingMax8u",)

    def grid(self) -> Iterable[Case]:
        yield from self._grids(MAX8U_TABLE)
        yield from self._classes_cases()

    def inputs(self, case: Case, rng: np.random.Generator) -> dict[str, Any]:
        x = rng.integers(0, 256, self._shape(case), dtype=np.uint8)
        if case.params["special"] == "classes":
            x = values.holding_every_class(x, "uint8", rng)
        return {"x": x}

    def run(self, library: Library, case: Case, inputs: dict[str, Any]) -> np.ndarray:
        if case.params["direct"]:
            return self._direct(library, case, inputs["x"])
        kernel, stride, pads = self._geometry(case)
        return simdbind.pooling_max(inputs["x"], kernel, stride=stride, pad=pads, layout=case.layout,
                                    ceil_mode=case.params["ceil"], out=self._out(case, inputs), library=library)

    def reference(self, case: Case, inputs: dict[str, Any]) -> np.ndarray:
        if case.params["direct"]:
            return self._direct_reference(case, inputs["x"])
        kernel, stride, pads = self._geometry(case)
        return reference.pooling_max(inputs["x"], kernel, stride, pads, case.layout, case.params["ceil"])

    def tolerance(self, case: Case) -> Tolerance:
        return EXACT


# -- benchmark cases: what `simdbind bench` times, and the work of a call of every case of the family ------------------
BENCH_NOTE = """Pooling throughput in GB/s of the bytes a call must move (its input read once, its output written once): a
ResNet stem max pooling 3x3/2 and a 2x2/2 reduction, NCHW and NHWC, max and average in float32, and the bf16 and
uint8 maxima. Memory-bound: each case is measured beside memcpy of the same bytes."""

_SHAPES = ("channels=64 height=112 width=112 kernel=3x3 stride=2x2 pad=1.1.1.1",
           "channels=256 height=56 width=56 kernel=2x2 stride=2x2")
_QUICK_SHAPE = "channels=64 height=56 width=56 kernel=3x3 stride=2x2 pad=1.1.1.1"


def _family(shape: str) -> list[str]:
    return ([f"pooling_max32f layout={layout} {shape} ceil=false" for layout in ("nchw", "nhwc")]
            + [f"pooling_average layout={layout} {shape} ceil=false exclude=false" for layout in ("nchw", "nhwc")]
            + [f"pooling_max16b layout=nhwc {shape} ceil=false", f"pooling_max8u layout=nhwc {shape} ceil=false"])


DESCRIPTORS = [line for shape in _SHAPES for line in _family(shape)]
QUICK = _family(_QUICK_SHAPE)


def work(case: Case) -> Work:
    """Input bytes + output bytes (output size by the library's own rule)."""
    p, size = case.params, simdbind.pooling_output_size
    if p["direct"]:
        out_h, out_w = p["out_h"], p["out_w"]
    else:
        out_h = size(p["height"], p["ky"], p["sy"], p["pad_top"], p["pad_bottom"], p["ceil"])
        out_w = size(p["width"], p["kx"], p["sx"], p["pad_left"], p["pad_right"], p["ceil"])
    channels = p["channels"]
    if "kc" in p:
        channels = size(channels, p["kc"], p["sc"], p["pc_begin"], p["pc_end"], p["ceil"])
    moved = itemsize(case) * p["batch"] * (elements((p["channels"], p["height"], p["width"]))
                                           + elements((channels, out_h, out_w)))
    return Work("GB/s", moved, moved)
