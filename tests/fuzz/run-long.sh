#!/usr/bin/env bash
# tests/fuzz/run-long.sh N [BUILD_DIR]: build the libFuzzer targets with clang (build-fuzz.sh, default build-fuzz/)
# and run each for N executions, one target at a time, printing executions, crashes and seconds per target.
# Exit 1 on any crash (artifacts in BUILD_DIR/fuzz-artifacts). FUZZ_TARGETS selects targets.
set -uo pipefail
cd "$(dirname "$0")/../.."
n=${1:?usage: tests/fuzz/run-long.sh N [BUILD_DIR]}
dir=${2:-build-fuzz}
tests/fuzz/build-fuzz.sh "$dir" >/dev/null || exit 1
exec tests/fuzz/fuzz-run.sh "$dir" runs "$n"
