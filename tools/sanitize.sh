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
python3 -m venv "$venv"
"$venv/bin/python" -m pip install -q cffi numpy "setuptools>=77"
export SIMDBIND_CFLAGS="-O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all"
export SIMDBIND_LDFLAGS="-fsanitize=address,undefined"
# A regular (non-editable) install builds a separate copy of the extension inside the venv.
"$venv/bin/python" -m pip install -q --no-build-isolation --force-reinstall --no-deps .

cc=${CC:-cc}
# Python itself is not instrumented: preload the runtimes; leaks are checked separately (tools/leakcheck.py).
export LD_PRELOAD="$($cc -print-file-name=libasan.so) $($cc -print-file-name=libubsan.so)"
export ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:halt_on_error=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
cd build  # import the installed, instrumented copy, not the source tree's
"../$venv/bin/simdbind" conformance --profile "$profile" --report-json asan-conformance.json "$@"
