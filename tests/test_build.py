"""The build's guarantees: kernel signatures checked by the compiler, and a release library without debug info."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from simdbind.library import ISAS, bundled_path, load

CSRC = Path(__file__).resolve().parent.parent / "csrc"


def _compiler() -> list[str]:
    command = shlex.split(os.environ.get("CC", "cc"))
    if shutil.which(command[0]) is None:
        pytest.skip(f"no C compiler ({command[0]}) to compile kernel units with")
    return command


#: A row of internal/isa_list.h: name, ENUM, target features (as CMakeLists.txt reads it).
ISA_ROW = re.compile(r'X\(arg, ([a-z0-9]+), ([A-Z0-9]+), [\w-]+, (?:required|optional), [A-Z0-9]+, "([a-z0-9.,]*)"\)')


def _unit_head(isa: str) -> str:
    """The lines CMakeLists.txt writes before a kernel source in `isa`'s unit, from internal/isa_list.h's rows (the
    ISA's number and suffix, and its target features: those of every row up to its own)."""
    rows = ISA_ROW.findall((CSRC / "internal" / "isa_list.h").read_text())
    names = [name for name, _, _ in rows]
    features = ",".join(f for _, _, f in rows[:names.index(isa) + 1] if f)
    head = f"#define SB_ISA_ID {names.index(isa)}\n#define SB_SUFFIX _{isa}\n"
    return head + (f'#define SB_TARGET_FEATURES "{features}"\n' if features else "")


def test_the_isa_list_is_the_one_python_and_c_read() -> None:
    rows = ISA_ROW.findall((CSRC / "internal" / "isa_list.h").read_text())
    assert tuple(name for name, _, _ in rows) == ISAS
    assert all(enum == name.upper() for name, enum, _ in rows)
    lib = load("bundled")
    assert [lib.ffi.string(lib.lib.SimdBindIsaName(i)).decode() for i in range(len(ISAS))] == list(ISAS)
    assert lib.lib.SimdBindIsaName(len(ISAS)) == lib.ffi.NULL


def _compile_unit(tmp_path: Path, isa: str, body: str) -> subprocess.CompletedProcess[str]:
    """Compile a kernel unit for `isa` as the build does (internal/target.h first), syntax only."""
    unit = tmp_path / f"unit_{isa}.c"
    unit.write_text(f'{_unit_head(isa)}#include "internal/target.h"\n{body}\n')
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


def _elf_section_names(path: str) -> list[str]:
    """Section names of a 64-bit little-endian ELF file (the shared libraries this project builds on Linux)."""
    data = Path(path).read_bytes()
    assert data[:4] == b"\x7fELF" and data[4] == 2 and data[5] == 1, f"{path}: not a 64-bit little-endian ELF file"
    shoff = struct.unpack_from("<Q", data, 0x28)[0]
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    headers = [struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize) for i in range(shnum)]
    strtab_offset = headers[shstrndx][4]
    names = []
    for name_offset, *_ in headers:
        start = strtab_offset + name_offset
        names.append(data[start:data.index(b"\0", start)].decode())
    return names


@pytest.mark.skipif(not bundled_path().endswith(".so"), reason="the section check reads ELF shared libraries")
def test_the_bundled_library_carries_no_debug_information() -> None:
    names = _elf_section_names(bundled_path())
    assert ".text" in names  # the reader found the real section table
    assert [n for n in names if n.startswith(".debug")] == [], f"{bundled_path()} has debug sections"


def test_an_isa_a_kernel_source_is_not_built_for_runs_the_nearest_variant_below(tmp_path: Path) -> None:
    """SB_VARIANT's choice: a missing avx512vnni variant falls back to avx512bw, a missing avx512bw one (a source
    built for base..avx2 only, as max8u is) to avx2; a present variant runs itself."""
    program = tmp_path / "variant.c"
    program.write_text('''#include "internal/dispatch.h"
#include <stdio.h>
static void base(void) {} static void sse41(void) {} static void avx2(void) {} static void bw(void) {}
static void vnni(void) {}
typedef void fn(void);
int main(void)
{
    fn * const full[SB_ISA_COUNT] = {base, sse41, avx2, bw, vnni};
    fn * const no_vnni[SB_ISA_COUNT] = {base, sse41, avx2, bw, 0};
    fn * const to_avx2[SB_ISA_COUNT] = {base, sse41, avx2, 0, 0};
    int wrong = 0;
    for (int isa = 0; isa < SB_ISA_COUNT; ++isa) {
        wrong += SB_VARIANT(full, isa) != full[isa];
        wrong += SB_VARIANT(no_vnni, isa) != (isa == SB_ISA_AVX512VNNI ? bw : full[isa]);
        wrong += SB_VARIANT(to_avx2, isa) != (isa >= SB_ISA_AVX512BW ? avx2 : full[isa]);
    }
    printf("%d\\n", wrong);
    return wrong != 0;
}
''')
    binary = tmp_path / "variant"
    subprocess.run([*_compiler(), "-std=gnu11", f"-I{CSRC}", str(program), "-o", str(binary)], check=True)
    result = subprocess.run([str(binary)], capture_output=True, text=True, check=False)
    assert result.returncode == 0 and result.stdout.strip() == "0", result.stdout


def test_the_cffi_generator_runs_without_the_package_and_makes_the_installed_declarations(tmp_path: Path) -> None:
    """csrc/cffi_modules.py runs at wheel build time, before simdbind exists: it imports nothing of the package, and
    its _abi.py is the one the package was built with."""
    import sys

    from simdbind import _abi

    script = ("import runpy, sys\n"
              f"sys.argv = ['cffi_modules.py', {str(tmp_path)!r}]\n"
              f"runpy.run_path({str(CSRC / 'cffi_modules.py')!r}, run_name='__main__')\n"
              "assert not [m for m in sys.modules if m.split('.')[0] == 'simdbind'], 'imported simdbind'\n")
    subprocess.run([sys.executable, "-c", script], check=True, cwd=tmp_path, timeout=300)
    assert (tmp_path / "_bundled.c").stat().st_size > 0
    assert (tmp_path / "_abi.py").read_text() == Path(_abi.__file__).read_text()
