"""Out of memory is an error, never a wrong result: every public operation, under every memory limit, either
returns exactly what it returns without the limit or raises MemoryError, writing nothing to ``out=``.

Two ways in, both in a subprocess (a crash there is a failure, not the end of the run):

* ``RLIMIT_AS`` (what ``ulimit -v`` and strict overcommit impose): the limit is set to the process's address space
  plus X MiB before each call, X walked down from 200 to 0, so that every allocation of the call, NumPy's, cffi's
  and the C library's, meets exhaustion at some step.
* ``SimdBindFailAllocation(n)``: the n-th allocation of the bundled library fails, for every n until the call
  makes fewer allocations, so that each allocation site of the C library is reached (an address-space limit hits
  large allocations first, small ones only by luck).

The cases come from the public API: a test checks that every public operation (function or context class of the
operation modules) has at least one, so a new operation fails until it gets a case here. The sizes make the C
side allocate (transformed and packed weights, GEMM panels, row buffers, copies).
"""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import simdbind

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS and /proc (Linux)")

#: MiB above the address space in use at each step of the CI sweep, and of the `full` one.
QUICK_STEPS = [200, 100, 48, 32, 24, *range(16, 4, -2), 4, 3, 2, 1, 0]  # failures start a few MiB above 0
FULL_STEPS = list(range(200, -1, -1))
#: Modules whose public functions and context classes are the operations (the rest is loading, enums, errors).
OPERATION_MODULES = ("simdbind.elementwise", "simdbind.pooling", "simdbind.inner_product", "simdbind.convolution",
                     "simdbind.gather")


class Case:
    """One call: `run()` makes the whole result (contexts included), writing into `out` when there is one."""

    def __init__(self, uses: str, run: Callable[[Case], Any], out: np.ndarray | None = None) -> None:
        self.uses, self._run, self.out = uses, run, out

    def __call__(self) -> Any:
        return self._run(self)

    def fill_out(self) -> None:
        if self.out is not None:
            self.out.view(np.uint8).fill(0xA5)

    def out_untouched(self) -> bool:
        return self.out is None or bool(np.all(self.out.view(np.uint8) == 0xA5))


def _data(seed: int, *shape: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def make_cases(library: simdbind.Library) -> dict[str, Case]:
    """The calls, by name; each names the public operation it uses."""
    import ml_dtypes

    lib = library
    s = simdbind
    big = _data(1, 1 << 20)
    image = _data(2, 2, 64, 56, 56)
    nhwc = np.ascontiguousarray(image.transpose(0, 2, 3, 1))
    bf16 = _data(3, 8, 512, 64).astype(ml_dtypes.bfloat16)
    k = np.array([1.0, 1e-3, -0.75], np.float32)
    x_ip, w_ip, b_ip = _data(4, 4, 4096), _data(5, 2048, 4096), _data(6, 2048)
    u8, i8 = (np.random.default_rng(7).integers(0, 256, (64, 2048)).astype(np.uint8),
              np.random.default_rng(8).integers(-128, 128, (1024, 2048)).astype(np.int8))
    a_ip, w_ctx, slopes = _data(9, 32, 1024), _data(10, 1024, 1024), _data(11, 1024)
    gather_data = _data(12, 64, 4096)
    gather_index = np.random.default_rng(13).integers(-64, 64, (64, 4096)).astype(np.int64)
    conv_x, w_wino = _data(14, 1, 128, 32, 32), _data(15, 128, 128, 3, 3)
    w_gemm, w_direct = _data(16, 256, 64, 5, 5), _data(17, 512, 32, 5, 5)
    w_dw, w_1x1 = _data(18, 64, 1, 3, 3), _data(19, 1, 1, 64, 512)
    conv_bias = _data(20, 512)

    def conv(shape: tuple[int, ...], dst_c: int, kernel: int, weight: np.ndarray, x: np.ndarray, **kw: Any) -> Any:
        def run(case: Case) -> Any:
            with s.Convolution32f(shape, dst_c, kernel, weight=weight, bias=conv_bias[:dst_c], library=lib,
                                  **kw) as context:
                return context.forward(x, out=case.out)
        return run

    def ip_context(case: Case, rows: int, isa: str | None = None, **kw: Any) -> Any:
        """M = rows: 8 takes the packed or direct GEMM, 32 the one that packs panels of B (and of A) per call;
        avx2 (8 floats a vector) has a GEMM of its own for a transposed B."""
        with lib.use_isa(isa or lib.isa), s.InnerProduct32f(rows, 1024, 1024, library=lib, **kw) as context:
            return context.forward(a_ip[:rows], None if kw.get("const_b", True) else w_ctx, out=case.out)

    def gather_context(case: Case) -> Any:
        with s.GatherElements(np.float32, np.int64, gather_data.shape, gather_index.shape, 0, index=gather_index,
                              library=lib) as context:
            return context.forward(gather_data, out=case.out)

    f32 = np.float32
    return {
        "unary": Case("unary", lambda c: s.unary(big, "exp", out=c.out, library=lib), np.empty_like(big)),
        "eltwise": Case("eltwise", lambda c: s.eltwise([big, big, big], "sum", library=lib)),
        "softmax32f": Case("softmax", lambda c: s.softmax(image, axis=1, library=lib)),
        "softmax16b": Case("softmax", lambda c: s.softmax(bf16, axis=1, library=lib)),
        "lrn_nchw": Case("lrn", lambda c: s.lrn(image, 2, k, "nchw", library=lib)),
        "lrn_nhwc": Case("lrn", lambda c: s.lrn(nhwc, 2, k, "nhwc", out=c.out, library=lib), np.empty_like(nhwc)),
        "lrn_onnx": Case("lrn_onnx", lambda c: s.lrn_onnx(nhwc, 5, layout="nhwc", library=lib)),
        "shuffle": Case("shuffle", lambda c: s.shuffle(image, image, 0, library=lib)),
        "pooling_average": Case("pooling_average", lambda c: s.pooling_average(
            image, 3, stride=2, pad=1, exclude_pad=True, out=c.out, library=lib), np.empty((2, 64, 28, 28), f32)),
        "pooling_max32f": Case("pooling_max", lambda c: s.pooling_max(nhwc, 3, stride=2, layout="nhwc",
                                                                       library=lib)),
        "pooling_max16b": Case("pooling_max", lambda c: s.pooling_max(image.astype(ml_dtypes.bfloat16), 2,
                                                                       stride=2, library=lib)),
        "pooling_max8u": Case("pooling_max", lambda c: s.pooling_max((image * 40 + 128).clip(0, 255).astype(
            np.uint8), 3, stride=2, library=lib)),
        "pooling_output_size": Case("pooling_output_size", lambda c: s.pooling_output_size(56, 3, 2, 1, 1)),
        "gather_elements": Case("gather_elements", lambda c: s.gather_elements(gather_data, gather_index, 0,
                                                                               library=lib)),
        "gather_context": Case("GatherElements", gather_context, np.empty(gather_index.shape, f32)),
        "inner_product": Case("inner_product", lambda c: s.inner_product(x_ip, w_ip, b_ip, out=c.out, library=lib),
                              np.empty((4, 2048), f32)),
        "inner_product_8i": Case("inner_product_8i", lambda c: s.inner_product_8i(u8, i8, library=lib)),
        "ip32f_bias_prelu": Case("InnerProduct32f", lambda c: ip_context(
            c, 8, trans_b=True, weight=w_ctx, bias=b_ip[:1024], activation=s.activation.prelu(slopes)),
            np.empty((8, 1024), f32)),
        "ip32f_b_per_call": Case("InnerProduct32f", lambda c: ip_context(c, 32, const_b=False, bias=b_ip[:1024])),
        "ip32f_b_per_call_nt": Case("InnerProduct32f", lambda c: ip_context(c, 32, const_b=False, trans_b=True)),
        "ip32f_b_per_call_nt_avx2": Case("InnerProduct32f", lambda c: ip_context(
            c, 32, "avx2" if "avx2" in lib.isas_supported else None, const_b=False, trans_b=True)),
        "conv_winograd_nchw": Case("Convolution32f", conv((128, 32, 32), 128, 3, w_wino, conv_x, pad=1),
                                   np.empty((1, 128, 32, 32), f32)),
        "conv_winograd_nhwc": Case("Convolution32f", conv(
            (32, 32, 128), 128, 3, s.convert_weight(w_wino, "nchw", "nhwc"),
            np.ascontiguousarray(conv_x.transpose(0, 2, 3, 1)), pad=1, layout="nhwc")),
        "conv_gemm_nchw": Case("Convolution32f", conv((64, 56, 56), 256, 5, w_gemm, image[:1], stride=2, pad=2)),
        "conv_1x1_nhwc": Case("Convolution32f", conv((56, 56, 64), 512, 1, w_1x1, nhwc[:1], layout="nhwc")),
        "conv_direct_nchw": Case("Convolution32f", conv((32, 56, 56), 512, 5, w_direct, image[:1, :32].copy(),
                                                        stride=2, pad=2)),
        "conv_depthwise_nchw": Case("Convolution32f", conv((64, 56, 56), 64, 3, w_dw, image[:1], stride=2, pad=1,
                                                           group=64)),
        "conv_depthwise_nhwc": Case("Convolution32f", conv((56, 56, 64), 64, 3, s.convert_weight(w_dw, "nchw",
                                                                                                 "nhwc"),
                                                           nhwc[:1], pad=1, group=64, layout="nhwc")),
        "conv2d": Case("conv2d", lambda c: s.conv2d(conv_x, w_wino, conv_bias[:128], pad=1, library=lib)),
        "convert_weight": Case("convert_weight", lambda c: s.convert_weight(w_gemm, "nchw", "nhwc")),
    }


def public_operations() -> set[str]:
    """The public functions and context classes of the operation modules (``simdbind.__all__``)."""
    names = set()
    for name in simdbind.__all__:
        value = getattr(simdbind, name)
        if (inspect.isfunction(value) or inspect.isclass(value)) and value.__module__ in OPERATION_MODULES:
            names.add(name)
    return names


# -- the subprocess -----------------------------------------------------------------------------------------------
def _address_space() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmSize in /proc/self/status")


def _same(a: Any, b: Any) -> bool:
    """Bit for bit: the same types, shapes, dtypes and bytes (tuples element by element)."""
    if isinstance(a, tuple) or isinstance(b, tuple):
        return (isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b)
                and all(_same(x, y) for x, y in zip(a, b)))
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.shape == b.shape
                and a.dtype == b.dtype and a.tobytes() == b.tobytes())
    return bool(a == b)


def _copy(result: Any) -> Any:
    if isinstance(result, tuple):
        return tuple(_copy(r) for r in result)
    return result.copy() if isinstance(result, np.ndarray) else result


def _outcome(case: Case, reference: Any, attempt: Callable[[], Any]) -> str:
    """'equal', 'memory' (MemoryError, out= untouched), or what went wrong."""
    case.fill_out()
    try:
        result = attempt()
    except MemoryError:
        return "memory" if case.out_untouched() else "MemoryError, but out= was written"
    except BaseException as error:  # anything else is a defect the test reports
        return f"{type(error).__name__}: {error}"
    return "equal" if _same(result, reference) else "WRONG RESULT"


def worker(mode: str, steps: list[int]) -> None:
    import resource

    library = simdbind.load("bundled")
    cases = make_cases(library)
    names = list(cases)
    references = {name: _copy(cases[name]()) for name in names}
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if mode == "rlimit":
        for mib in steps:
            for name in names:
                def limited(case: Case = cases[name], mib: int = mib) -> Any:
                    resource.setrlimit(resource.RLIMIT_AS, (_address_space() + (mib << 20), hard))
                    try:
                        return case()
                    finally:
                        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
                print(json.dumps([mib, name, _outcome(cases[name], references[name], limited)]), flush=True)
        return
    arm = library.lib.SimdBindFailAllocation
    for name in names:
        nth = 1
        while True:
            def failing(case: Case = cases[name], nth: int = nth) -> Any:
                arm(nth)
                try:
                    return case()
                finally:
                    left = arm(0)
                    reached[0] = left == 0
            reached = [False]
            outcome = _outcome(cases[name], references[name], failing)
            print(json.dumps([nth, name, outcome if reached[0] or outcome != "memory" else "memory without a "
                              "failed allocation"]), flush=True)
            if not reached[0]:
                break  # the call made fewer than nth allocations: every one of them has failed once
            nth += 1


def run_worker(mode: str, steps: list[int], timeout: float) -> list[tuple[int, str, str]]:
    # glibc serves a block freed earlier in the process again without asking for address space, and raises its
    # mmap threshold as blocks are freed: a fixed threshold and no trimming slack make every large block of a call
    # new address space, which the limit can refuse, as it refuses the first call of a process.
    env = {**os.environ, "MALLOC_MMAP_THRESHOLD_": "65536", "MALLOC_TRIM_THRESHOLD_": "0"}
    run = subprocess.run([sys.executable, __file__, mode, json.dumps(steps)], env=env,
                         capture_output=True, text=True, timeout=timeout)
    lines = [json.loads(line) for line in run.stdout.splitlines() if line.startswith("[")]
    assert run.returncode == 0, (f"the worker ended with exit {run.returncode} after {lines[-1:] or 'no call'}:\n"
                                 f"{run.stderr[-3000:]}")
    return [tuple(line) for line in lines]  # type: ignore[misc]


def assert_never_wrong(outcomes: list[tuple[int, str, str]]) -> dict[str, set[str]]:
    wrong = [o for o in outcomes if o[2] not in ("equal", "memory")]
    assert not wrong, f"{len(wrong)} calls neither matched the reference nor raised MemoryError: {wrong[:20]}"
    seen: dict[str, set[str]] = {}
    for _, name, outcome in outcomes:
        seen.setdefault(name, set()).add(outcome)
    return seen


# -- the tests ----------------------------------------------------------------------------------------------------
CSRC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "csrc")


def test_every_allocation_of_the_library_goes_through_its_helper():
    """csrc/internal/memory.h states what a failed allocation must lead to; an allocator called around it would
    escape both that rule and the fault injection of the test below."""
    import re

    direct = re.compile(r"\b(malloc|calloc|realloc|aligned_alloc|posix_memalign|free|strdup)\s*\(")
    found = []
    for folder, _, files in os.walk(CSRC):
        for name in files:
            path = os.path.join(folder, name)
            if name.endswith((".c", ".h")) and os.path.relpath(path, CSRC) != os.path.join("internal", "memory.h"):
                text = open(path, encoding="utf-8").read()
                found += [f"{os.path.relpath(path, CSRC)}: {m.group(0)}" for m in direct.finditer(text)]
    assert found == []


def test_every_public_operation_has_a_case():
    covered = {case.uses for case in make_cases(simdbind.load("bundled")).values()}
    assert public_operations() - covered == set()


def test_every_allocation_of_the_library_failing_is_an_error_or_harmless():
    """Each allocation the C library makes in each call, failed in turn: the call raises MemoryError with out=
    untouched, or (optional scratch) returns the very same result."""
    seen = assert_never_wrong(run_worker("inject", [], timeout=600))
    # The required allocations are reached: contexts, transforms, copies and row buffers fail visibly.
    for name in ("conv_winograd_nchw", "conv_direct_nchw", "ip32f_bias_prelu", "lrn_nhwc", "gather_context"):
        assert "memory" in seen[name], (name, seen[name])


def test_every_call_under_a_shrinking_address_space_limit_is_right_or_raises():
    seen = assert_never_wrong(run_worker("rlimit", QUICK_STEPS, timeout=600))
    assert all("equal" in outcomes for outcomes in seen.values()), seen  # the top of the sweep leaves room
    assert sum("memory" in outcomes for outcomes in seen.values()) >= len(seen) // 2, seen


@pytest.mark.full
def test_every_call_under_every_limit_by_the_mebibyte(request):
    if request.config.getoption("simd_profile") != "full":
        pytest.skip("the sweep by the MiB takes minutes: --simd-profile full")
    assert_never_wrong(run_worker("rlimit", FULL_STEPS, timeout=3600))


if __name__ == "__main__":
    worker(sys.argv[1], json.loads(sys.argv[2]))
