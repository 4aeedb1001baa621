"""The build's guarantees: kernel signatures checked by the compiler."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

CSRC = Path(__file__).resolve().parent.parent / "csrc"


def _compiler() -> list[str]:
    command = shlex.split(os.environ.get("CC", "cc"))
    if shutil.which(command[0]) is None:
        pytest.skip(f"no C compiler ({command[0]}) to compile kernel units with")
    return command


def _compile_unit(tmp_path: Path, isa: str, body: str) -> subprocess.CompletedProcess[str]:
    """Compile a kernel unit for `isa` as the build does (internal/target.h first), syntax only."""
    unit = tmp_path / f"unit_{isa}.c"
    unit.write_text(f'#define SB_TARGET_{isa.upper()} 1\n#include "internal/target.h"\n{body}\n')
    return subprocess.run(
        [*_compiler(), "-std=gnu11", "-fsyntax-only", "-DSIMD_API=", f"-I{CSRC}", str(unit)],
        capture_output=True, text=True, check=False,
    )


# (kernel source, its definition's first line, the same line drifted from the declared signature)
DRIFTS = {
    "exported signature": (
        "pooling/average.dispatch.c",
        "void SB_FN(pooling_average)(const float * src, size_t srcC, size_t srcH, size_t srcW, size_t kernelY,",
        "void SB_FN(pooling_average)(const float * src, int srcC, size_t srcH, size_t srcW, size_t kernelY,",
    ),
    "internal signature": (
        "convolution/conv_gemm.dispatch.c",
        "void SB_FN(conv_forward_1x1)(const conv_ctx * c, const float * src, float * buf, float * dst)",
        "void SB_FN(conv_forward_1x1)(const conv_ctx * c, const float * src, float * dst)",
    ),
}


@pytest.mark.parametrize("kind", sorted(DRIFTS))
@pytest.mark.parametrize("isa", ["base", "avx2"])
def test_a_kernel_that_drifts_from_its_declaration_does_not_compile(tmp_path: Path, kind: str, isa: str) -> None:
    source, line, drifted = DRIFTS[kind]
    text = (CSRC / source).read_text()
    assert text.count(line) == 1, f"{source} no longer has the line this test changes: {line}"
    # The kernel source as it is compiles with this command; with one parameter changed it must not.
    as_is = _compile_unit(tmp_path, isa, text)
    assert as_is.returncode == 0, as_is.stderr
    result = _compile_unit(tmp_path, isa, text.replace(line, drifted))
    assert result.returncode != 0
    assert "conflicting types" in result.stderr, result.stderr
