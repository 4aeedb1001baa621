"""cffi code generator for simdbind, run by the build (CMakeLists.txt): ``python csrc/cffi_modules.py OUT_DIR``.

It runs before simdbind exists (at wheel build time), so it imports nothing of the package.

Two modules come out of one header, ``csrc/simd_synet.h`` (plus ``csrc/simdbind_ext.h`` for the bundled-only
functions, and the enum ``sb_isa_id`` of the ISA numbers, read from the rows of ``csrc/internal/isa_list.h``):

* ``simdbind._abi``: out-of-line ABI mode, declarations only (``OUT_DIR/_abi.py``). ``ffi.dlopen(path)`` drives
  any Simd shared library, upstream or ours, through the exported symbols.
* ``simdbind._bundled``: API mode, the bundled library itself: cffi's glue (``OUT_DIR/_bundled.c``) compiled
  together with our C kernels (which sources, for which ISAs: CMakeLists.txt).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import cffi

CSRC = Path(__file__).resolve().parent
HEADERS = [CSRC / "simd_synet.h", CSRC / "simdbind_ext.h"]
ISA_LIST = CSRC / "internal" / "isa_list.h"

# A declaration is everything from SIMD_API to the semicolon; its name is the identifier before the "(".
DECLARATION = re.compile(r"SIMD_API\b[^;]*?\b(Simd\w+)\s*\([^;]*\)\s*;", re.S)
# A definition in our C sources: SIMD_API <type> Name( ... ) {
DEFINITION = re.compile(r"^SIMD_API\b[^;{]*?\b(Simd\w+)\s*\(", re.M)


# A row of the ISA list: X(arg, name, ENUM, ...), one a line (the rows CMakeLists.txt reads too).
ISA_ROW = re.compile(r"X\(arg, ([a-z0-9]+), ([A-Z0-9]+), [\w-]+, (?:required|optional),")


def isa_enum() -> str:
    """The ISA numbers as the C enum of internal/isa_list.h defines them, for cffi: ``sb_isa_id``, SB_ISA_<ENUM> =
    the row's index (simdbind.ISAS reads the names from it)."""
    rows = ISA_ROW.findall(ISA_LIST.read_text())
    if not rows:
        raise SystemExit(f"{ISA_LIST}: no ISA rows read")
    return "typedef enum { " + ", ".join(f"SB_ISA_{enum} = {i}" for i, (_, enum) in enumerate(rows)) + " } sb_isa_id;\n"


def _strip(text: str) -> str:
    """Header text as cffi's parser wants it: no comments, no preprocessor lines, no SIMD_API marker."""
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    text = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
    return re.sub(r"\bSIMD_API\b\s*", "", text)


def header_text() -> str:
    return "\n".join(path.read_text() for path in HEADERS)


def declared_functions(text: str) -> dict[str, str]:
    """Every function the headers declare, name -> declaration text."""
    return {m.group(1): m.group(0) for m in DECLARATION.finditer(text)}


def cdef(only: set[str] | None = None) -> str:
    """cffi declarations from the headers; with `only`, functions outside it are left out (types stay)."""
    text = header_text()
    if only is not None:
        for name, declaration in declared_functions(text).items():
            if name not in only:
                text = text.replace(declaration, "")
    return _strip(text) + isa_enum()


def _api_sources() -> list[Path]:
    """The sources compiled once (api.c, runtime): they define the exported functions."""
    return sorted(p for p in CSRC.rglob("*.c") if not p.name.endswith(".dispatch.c"))


def bundled_functions() -> set[str]:
    """The API functions our C sources define: the bundled module declares exactly these."""
    return {m.group(1) for p in _api_sources() for m in DEFINITION.finditer(p.read_text())}


def abi_ffi() -> cffi.FFI:
    ffi = cffi.FFI()
    ffi.cdef(cdef())
    ffi.set_source("simdbind._abi", None)
    return ffi


def bundled_ffi() -> cffi.FFI:
    ffi = cffi.FFI()
    ffi.cdef(cdef(only=bundled_functions()))
    ffi.set_source("simdbind._bundled",
                   '#include "simd_synet.h"\n#include "simdbind_ext.h"\n#include "internal/isa_list.h"\n')
    return ffi


def generate(out_dir: Path) -> None:
    """Write _bundled.c (the API-mode module's C, compiled with the kernels) and _abi.py into out_dir."""
    out_dir.mkdir(parents=True, exist_ok=True)
    bundled_ffi().emit_c_code(str(out_dir / "_bundled.c"))
    abi_ffi().emit_python_code(str(out_dir / "_abi.py"))


if __name__ == "__main__":
    generate(Path(sys.argv[1]))
