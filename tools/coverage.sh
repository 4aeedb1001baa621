#!/usr/bin/env bash
# Build the bundled library with gcov instrumentation in its own virtual environment (build/coverage-venv, objects
# and counters in build/coverage) and measure the line and branch coverage of its kernels, per ISA, for a run:
#
#   tools/coverage.sh [simdbind conformance coverage arguments] [-- conformance or explore arguments]
#   tools/coverage.sh --json ci.json --md ci.md -- --profile ci
#   tools/coverage.sh --json explore.json -- explore --budget 600
#
# The build keeps the standard optimization (Release, -O3): the coverage is that of the code users run.
set -euo pipefail
cd "$(dirname "$0")/.."

venv=build/coverage-venv
python3 -m venv "$venv"
"$venv/bin/python" -m pip install -q cffi numpy hypothesis ml_dtypes gcovr
# A regular (non-editable) install built in its own build directory (CMakeLists.txt's SIMDBIND_C_FLAGS /
# SIMDBIND_LINK_FLAGS): the counters (.gcda) are written beside the objects there when a process exits. Counters
# are updated atomically: the kernels run on several threads, and plain updates tear (gcov then reads negative counts).
"$venv/bin/python" -m pip install -q --force-reinstall --no-deps \
    -C build-dir=build/coverage \
    -C "cmake.define.SIMDBIND_C_FLAGS=--coverage -fprofile-update=atomic" \
    -C "cmake.define.SIMDBIND_LINK_FLAGS=--coverage" \
    .

build=$PWD/build/coverage
cd build  # import the installed, instrumented copy, not the source tree's
exec "../$venv/bin/simdbind" conformance coverage --build "$build" "$@"
