#!/usr/bin/env bash
# Build the bundled library with AddressSanitizer + UndefinedBehaviorSanitizer in its own virtual environment
# (build/asan-venv) and run a conformance profile under it. Any sanitizer report aborts the run.
#
#   tools/sanitize.sh [PROFILE] [extra simdbind conformance arguments]     (PROFILE: ci by default)
set -euo pipefail
cd "$(dirname "$0")/.."
profile=${1:-ci}
shift || true

venv=build/asan-venv
sanitizers=-fsanitize=address,undefined
python3 -m venv "$venv"
"$venv/bin/python" -m pip install -q cffi numpy
# A regular (non-editable) install into the venv, built in its own build directory (CMakeLists.txt's
# SIMDBIND_C_FLAGS / SIMDBIND_LINK_FLAGS; Debug: no -O3, the flags below choose the optimization).
"$venv/bin/python" -m pip install -q --force-reinstall --no-deps \
    -C build-dir=build/asan -C cmake.build-type=Debug \
    -C "cmake.define.SIMDBIND_C_FLAGS=-O1 -g -fno-omit-frame-pointer $sanitizers -fno-sanitize-recover=all" \
    -C "cmake.define.SIMDBIND_LINK_FLAGS=$sanitizers" \
    .

cc=${CC:-cc}
# Python itself is not instrumented: preload the runtimes; leaks are checked separately (tools/leakcheck.py).
export LD_PRELOAD="$($cc -print-file-name=libasan.so) $($cc -print-file-name=libubsan.so)"
export ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:halt_on_error=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
cd build  # import the installed, instrumented copy, not the source tree's
"../$venv/bin/simdbind" conformance --profile "$profile" --report-json asan-conformance.json "$@"
