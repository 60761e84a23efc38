#!/usr/bin/env bash
# tests/fuzz/run-ci.sh REPLAY_BUILD_DIR [FUZZ_BUILD_DIR]: the CI's fuzz step. With clang and its libFuzzer runtime:
# build the targets (build-fuzz.sh, default build-fuzz/) and fuzz each from its committed corpus for the executions
# tests/fuzz/ci-runs.txt gives it (about 20 s each) from seed 1, so the step is reproducible (fuzz-run.sh "ci").
# Without them: say so, and replay every corpus through the replay executables of REPLAY_BUILD_DIR (a gcc build) instead.
# Exit 1 on a crash.
set -uo pipefail
cd "$(dirname "$0")/../.."
replay_dir=${1:?usage: tests/fuzz/run-ci.sh REPLAY_BUILD_DIR [FUZZ_BUILD_DIR]}
dir=${2:-build-fuzz}
tests/fuzz/build-fuzz.sh "$dir" >/dev/null
rc=$?
if [ $rc -eq 0 ]; then
  exec tests/fuzz/fuzz-run.sh "$dir" ci 0
fi
if [ $rc -ne 3 ]; then
  echo "fuzz: building the libFuzzer targets in $dir failed" >&2
  exit 1
fi
tests/fuzz/build-fuzz.sh "$dir" || true   # prints why clang cannot build them
echo "fuzz: replaying the committed corpora instead (no fuzzing)"
status=0
for t in $(tests/fuzz/targets.sh); do
  ninja -C "$replay_dir" "tests/fuzz/${t}_replay" >/dev/null || { status=1; continue; }
  printf '%-18s ' "$t"
  "$replay_dir/tests/fuzz/${t}_replay" "tests/fuzz/corpus/$t" || status=1
done
exit $status
