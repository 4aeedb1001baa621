#!/usr/bin/env bash
# Run the avx512bw and avx512vnni code paths of the bundled library on a CPU without AVX-512.
#
#   tools/emulate_avx512.sh [pytest arguments]        (default: the whole suite, -n 2)
#
# A copy of the sources git knows (tracked or not ignored) (build/emulate-avx512/src) is built with -DSB_EMULATE_AVX512
# (CMakeLists.txt's SIMDBIND_C_FLAGS) in its own venv:
# the AVX-512 units compile for AVX2 and call csrc/internal/emulate_avx512.h, which implements each AVX-512
# intrinsic we use lane by lane from Intel's pseudo-code; the library then reports both ISAs as supported, so the
# suite runs them like any other ISA (conformance at every ISA, every other test at the default, avx512vnni).
# What it proves and what it cannot: docs/avx512-emulation.md. Slow (scalar lanes); timings mean nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
work=build/emulate-avx512
rm -rf "$work/src"
mkdir -p "$work/src"
git ls-files -z --cached --others --exclude-standard | xargs -0 tar -cf - | tar -xf - -C "$work/src"
[ -e ../shared ] && ln -sfn "$root/../shared" "$work/shared"  # the spec, for the ABI test that reads it

python3 -m venv "$work/venv"
cd "$work/src"
"../venv/bin/python" -m pip install -q -C cmake.define.SIMDBIND_C_FLAGS=-DSB_EMULATE_AVX512=1 -e '.[test]'
echo "=== EMULATED AVX-512 (tools/emulate_avx512.sh): timings are meaningless, results are what counts ==="
"../venv/bin/simdbind" info | grep -iE "isa|avx512" || true
[ $# -gt 0 ] || set -- -n 2 -q
exec "../venv/bin/python" -m pytest "$@"  # quoted: -k "a or b" stays one argument
