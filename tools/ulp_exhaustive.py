"""Every float32 input through the unary operations, at every ISA: the maximum ulp error and where it occurs.

    python tools/ulp_exhaustive.py                                   # bundled library, every ISA, all 2^32 inputs
    python tools/ulp_exhaustive.py --library /path/to/libSimd.so     # an upstream build (its own ISA)
    python tools/ulp_exhaustive.py --ops exp,log --isa avx2 --step 7 # a sample: every 7th bit pattern

exp, log, erf, tanh, sin and cos are measured in ulps against glibc's double functions (error < 2^-28 float ulp);
rcp, sqrt, rsqrt, abs, neg, not, zero, ceil, floor, round and sign are compared bit for bit with the contract's
scalar C expression (docs/guide/tolerance.md, "The unary contract"). The reference of each chunk of inputs is
computed once and shared by every ISA. The C part (tools/ulp_exhaustive.c) is compiled on first use into the cache directory.
About 2-4 minutes per transcendental operation for the five ISAs on two cores; the exact operations take seconds.
"""

from __future__ import annotations

import argparse
import ctypes
import hashlib
import math
import os
import shutil
import struct
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

SOURCE = Path(__file__).with_name("ulp_exhaustive.c")
TRANSCENDENTAL = ("exp", "log", "erf", "tanh", "sin", "cos")
EXACT = ("rcp", "sqrt", "rsqrt", "abs", "neg", "not", "zero", "ceil", "floor", "round", "sign")


@dataclass
class Row:
    """One (operation, ISA) result; ulp fields are None for the bit-exact operations and the reverse."""

    op: str
    isa: str
    count: int
    max_ulp: float | None = None
    max_x: float | None = None
    max_y: float | None = None
    max_exact: float | None = None
    max_ulp_subnormal: float | None = None
    subnormal_x: float | None = None
    over_1_5: int = 0
    special: int = 0
    special_x: float | None = None
    special_y: float | None = None
    mismatches: int = 0
    mismatch_x: float | None = None
    mismatch_y: float | None = None
    mismatch_expected: float | None = None

    @property
    def ok(self) -> bool:
        """Within the contract: <= 1.5 ulp and no value-rule break, or bit-exact."""
        if self.max_ulp is None:
            return self.mismatches == 0
        return self.over_1_5 == 0 and self.special == 0


def _float(hex_bits: str) -> float:
    return struct.unpack("<f", struct.pack("<I", int(hex_bits, 16)))[0]


def _parse(line: str, isa_names: dict[str, str]) -> Row:
    f = line.rstrip("\n").split("\t")
    isa = isa_names.get(f[2], f[2])
    if f[0] == "ulp":
        has_subnormal = float(f[8]) > 0 or f[9] != "00000000"
        return Row(op=f[1], isa=isa, count=int(f[3]), max_ulp=float(f[4]), max_x=_float(f[5]), max_y=_float(f[6]),
                   max_exact=float(f[7]), max_ulp_subnormal=float(f[8]) if has_subnormal else None,
                   subnormal_x=_float(f[9]) if has_subnormal else None, over_1_5=int(f[10]), special=int(f[11]),
                   special_x=_float(f[12]) if int(f[11]) else None, special_y=_float(f[13]) if int(f[11]) else None)
    mismatches = int(f[4])
    return Row(op=f[1], isa=isa, count=int(f[3]), mismatches=mismatches,
               mismatch_x=_float(f[5]) if mismatches else None, mismatch_y=_float(f[6]) if mismatches else None,
               mismatch_expected=_float(f[7]) if mismatches else None)


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "simdbind"


def build(compiler: str | None = None) -> Path:
    """Compile tools/ulp_exhaustive.c (once per source version) and return the shared object."""
    text = SOURCE.read_bytes()
    target = cache_dir() / f"ulp_exhaustive-{hashlib.sha256(text).hexdigest()[:16]}.so"
    if not target.exists():
        cc = compiler or os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
        if cc is None:
            raise RuntimeError("no C compiler (cc/gcc) to build tools/ulp_exhaustive.c")
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_suffix(f".{os.getpid()}.tmp")
        subprocess.run([cc, "-O2", "-fopenmp", "-fPIC", "-shared", "-o", str(partial), str(SOURCE), "-ldl", "-lm"],
                       check=True)
        partial.replace(target)
    return target


def run(library_path: str, ops: list[str], isas: list[tuple[str, str]], step: int = 1) -> list[Row]:
    """Measure `ops` in the library at `isas` ((number or "native", display name) pairs); one Row per pair."""
    tool = ctypes.CDLL(str(build()))
    names = dict(isas)
    rows: list[Row] = []
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "rows.tsv")
        for op in ops:
            isa_numbers = dict.fromkeys(n.split(":")[-1] for n, _ in isas)  # "0:native" -> "native"
            args = [b"ulp_exhaustive", library_path.encode(), op.encode(), ",".join(isa_numbers).encode(),
                    str(step).encode(), out.encode()]
            argv = (ctypes.c_char_p * len(args))(*args)
            if tool.ulp_exhaustive(len(args), argv) != 0:
                raise RuntimeError(f"ulp_exhaustive failed for {op} in {library_path}")
            with open(out) as f:
                rows += [_parse(line, names) for line in f if line.strip()]
    return rows


def _g(v: float | None) -> str:
    return "-" if v is None else f"{v:.9g}"


def format_rows(rows: list[Row]) -> str:
    lines = ["| op | isa | inputs | max ulp | at x | got | exact | max ulp, subnormal results | > 1.5 ulp | "
             "value-rule breaks (first x -> got) |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if r.max_ulp is None:
            broken = f"{r.mismatches} ({_g(r.mismatch_x)} -> {_g(r.mismatch_y)}, expected {_g(r.mismatch_expected)})" \
                if r.mismatches else "0"
            lines.append(f"| {r.op} | {r.isa} | {r.count} | bit-exact: {'yes' if r.ok else 'no'} | | | | | | {broken} |")
            continue
        special = f"{r.special} ({_g(r.special_x)} -> {_g(r.special_y)})" if r.special else "0"
        sub = "-" if r.max_ulp_subnormal is None else f"{r.max_ulp_subnormal:.3f} (x = {_g(r.subnormal_x)})"
        lines.append(f"| {r.op} | {r.isa} | {r.count} | {r.max_ulp:.3f} | {_g(r.max_x)} | {_g(r.max_y)} | "
                     f"{r.max_exact:.9g} | {sub} | {r.over_1_5} | {special} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--library", default="bundled",
                        help="'bundled' (default) or the path of a Simd library (several: comma-separated)")
    parser.add_argument("--isa", default="all", help="comma-separated ISAs of the bundled library, or 'all'")
    parser.add_argument("--ops", default=",".join(TRANSCENDENTAL + EXACT), help="comma-separated operations")
    parser.add_argument("--step", type=int, default=1, help="visit every STEP-th bit pattern (default 1: all)")
    args = parser.parse_args(argv)
    ops = [o for o in args.ops.split(",") if o]
    unknown = [o for o in ops if o not in TRANSCENDENTAL + EXACT]
    if unknown or args.step < 1:
        parser.error(f"--ops: unknown {', '.join(unknown)}" if unknown else "--step: must be >= 1")
    if args.library == "bundled":
        from simdbind.library import ISAS, bundled_path, load

        lib = load("bundled")
        wanted = lib.isas_supported if args.isa == "all" else tuple(args.isa.split(","))
        missing = [i for i in wanted if i not in lib.isas_supported]
        if missing:
            parser.error(f"--isa: {', '.join(missing)} not supported here (supported: {', '.join(lib.isas_supported)})")
        path = bundled_path()
        isas = [(str(ISAS.index(i)), i) for i in wanted]
        previous = lib.isa
        try:
            rows = run(path, ops, isas, args.step)
        finally:
            lib.set_isa(previous)
    else:
        # Several paths (comma-separated): one column each, named by file.
        path = args.library
        paths = path.split(",")
        isas = [("native", "native")] if len(paths) == 1 else \
            [(f"{i}:native", os.path.basename(p)) for i, p in enumerate(paths)]
        rows = run(path, ops, isas, args.step)
    print(f"library: {path}; inputs: every {args.step}{'st' if args.step == 1 else 'th'} of the 2^32 bit patterns")
    print(format_rows(rows))
    bad = [r for r in rows if not r.ok]
    print(f"{len(rows) - len(bad)} within the contract, {len(bad)} outside it")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
