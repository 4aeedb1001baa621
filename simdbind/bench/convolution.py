"""Convolution32f throughput (GFLOP/s = 2 * multiply-adds / s) on the issue's shapes, NCHW and NHWC, vs PyTorch.

Shapes: ResNet 3x3 64->64 at 56x56, 1x1 256->64 at 56x56, depthwise 3x3 128 at 56x56, 3x3 stride 2 32->64 at
112x112, and MobileNetV2-style blocks (1x1 expand 24->144, depthwise 3x3 144 at stride 1 and 2, 1x1 project 144->24
at 56x56). Bias and ReLU are fused in every case (PyTorch runs them as separate ops: conv2d then relu_ in place).

The ``simdbind`` entry builds its context on the library it is given, so the context records the ISA being measured
(Init fixes it); the returned callable carries the chosen algorithm as ``.info`` (e.g. ``"avx2::WinogradF2x2"``).
PyTorch uses ``channels_last`` tensors for NHWC.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

import simdbind

#: (name, srcC, H, W, dstC, kernel, stride, pad, group)
SHAPES = (
    ("resnet 3x3 64-64 56", 64, 56, 56, 64, 3, 1, 1, 1),
    ("1x1 256-64 56", 256, 56, 56, 64, 1, 1, 0, 1),
    ("depthwise 3x3 128 56", 128, 56, 56, 128, 3, 1, 1, 128),
    ("3x3 s2 32-64 112", 32, 112, 112, 64, 3, 2, 1, 1),
    ("mbv2 expand 1x1 24-144 56", 24, 56, 56, 144, 1, 1, 0, 1),
    ("mbv2 depthwise 3x3 144 56", 144, 56, 56, 144, 3, 1, 1, 144),
    ("mbv2 depthwise 3x3 s2 144 56", 144, 56, 56, 144, 3, 2, 1, 144),
    ("mbv2 project 1x1 144-24 56", 144, 56, 56, 24, 1, 1, 0, 1),
)
QUICK = ("resnet 3x3 64-64 56", "1x1 256-64 56", "depthwise 3x3 128 56")


def _torch() -> Any:
    try:
        import torch
    except Exception:  # noqa: BLE001 - not installed, or a broken install
        return None
    return torch


def _flops(src_c: int, h: int, w: int, dst_c: int, k: int, s: int, p: int, g: int) -> int:
    dst_h, dst_w = (h + 2 * p - k) // s + 1, (w + 2 * p - k) // s + 1
    return 2 * dst_h * dst_w * dst_c * (src_c // g) * k * k


def _simdbind_entry(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, shape: tuple, layout: str
                    ) -> Callable[[simdbind.Library], Callable[[], Any]]:
    _, src_c, h, w, dst_c, k, s, p, g = shape

    def bind(library: simdbind.Library) -> Callable[[], Any]:
        conv = simdbind.Convolution32f(x.shape, dst_c, k, stride=s, pad=p, group=g, activation="relu",
                                       layout=layout, weight=weight, bias=bias, library=library)
        out = np.empty(conv.out_shape, np.float32)
        buffer = np.empty(max(conv.external_buffer_size, 1), np.float32)

        def call() -> Any:
            return conv.forward(x, out=out, buffer=buffer)

        call.info = conv.info  # type: ignore[attr-defined]
        call.context = conv  # type: ignore[attr-defined]  (keeps the context alive with the callable)
        return call

    return bind


def cases(quick: bool = False) -> list[dict[str, Any]]:
    torch = _torch()
    rng = np.random.default_rng(6)
    result = []
    for shape in SHAPES:
        name, src_c, h, w, dst_c, k, s, p, g = shape
        if quick and name not in QUICK:
            continue
        oihw = rng.uniform(-1, 1, (dst_c, src_c // g, k, k)).astype(np.float32)
        bias = rng.uniform(-1, 1, dst_c).astype(np.float32)
        nchw = rng.uniform(-1, 1, (1, src_c, h, w)).astype(np.float32)
        for layout in ("nchw", "nhwc"):
            x = nchw if layout == "nchw" else np.ascontiguousarray(nchw.transpose(0, 2, 3, 1))
            weight = oihw if layout == "nchw" else simdbind.convert_weight(oihw, "nchw", "nhwc")
            peers: dict[str, Callable[[], Any]] = {}
            if torch is not None:
                tx = torch.from_numpy(nchw)
                tw = torch.from_numpy(oihw)
                if layout == "nhwc":
                    tx = tx.contiguous(memory_format=torch.channels_last)
                    tw = tw.contiguous(memory_format=torch.channels_last)
                tb = torch.from_numpy(bias)
                functional = torch.nn.functional

                def peer(tx=tx, tw=tw, tb=tb, s=s, p=p, g=g, functional=functional, torch=torch) -> Any:
                    with torch.no_grad():
                        return functional.conv2d(tx, tw, tb, stride=s, padding=p, groups=g).relu_()

                peers["torch"] = peer
            result.append({
                "name": f"conv {layout} {name}",
                "family": "convolution",
                "unit": "GFLOP/s",
                "work": _flops(src_c, h, w, dst_c, k, s, p, g),
                "simdbind": _simdbind_entry(x, weight, bias, shape, layout),
                "peers": peers,
                "note": "bias + relu fused; torch: conv2d + relu_" + (", channels_last" if layout == "nhwc" else ""),
            })
    return result


def _seconds(call: Callable[[], Any], repeat: int, stat: str = "median") -> float:
    import time

    call()  # warm-up (first-touch of buffers, lazy allocations)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return float(np.median(times) if stat == "median" else np.min(times))


def main(argv: list[str] | None = None) -> None:
    """A stand-alone table (``python -m simdbind.bench.convolution [--quick] [--isa avx2,...] [--threads 1,2]``);
    the project's bench harness runs the same cases with its own timing and reports."""
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--isa", default="", help="comma-separated ISAs (default: every supported one but base)")
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--stat", choices=("median", "min"), default="median",
                        help="time per call: the median (default) or, on a loaded machine, the best of --repeat")
    args = parser.parse_args(argv)
    library = simdbind.load("bundled")
    isas = args.isa.split(",") if args.isa else [i for i in library.isas_supported if i != "base"]
    threads = [int(t) for t in args.threads.split(",")]
    torch = _torch()
    print("| shape | layout | threads | " + " | ".join(f"{isa} GFLOP/s (algorithm)" for isa in isas)
          + (" | torch GFLOP/s |" if torch is not None else " |"))
    print("|---|---|---|" + "---|" * len(isas) + ("---|" if torch is not None else ""))
    previous = library.threads
    try:
        for case in cases(args.quick):
            shape_name, layout = case["name"][len("conv nchw "):], case["name"].split()[1]
            for count in threads:
                library.set_threads(count)
                cells = []
                for isa in isas:
                    with library.use_isa(isa):
                        call = case["simdbind"](library)
                    seconds = _seconds(call, args.repeat, args.stat)
                    cells.append(f"{case['work'] / seconds / 1e9:.1f} ({call.info.split('::')[1]})")
                row = f"| {shape_name} | {layout} | {count} | " + " | ".join(cells) + " |"
                if torch is not None and "torch" in case["peers"]:
                    torch.set_num_threads(count)
                    row += f" {case['work'] / _seconds(case['peers']['torch'], args.repeat, args.stat) / 1e9:.1f} |"
                print(row, flush=True)
    finally:
        library.set_threads(previous)


if __name__ == "__main__":
    main()
