#!/usr/bin/env bash
# tests/fuzz/fuzz-run.sh BUILD_DIR MODE ARG: run every libFuzzer target of BUILD_DIR (built by build-fuzz.sh) with its
# committed corpus, MODE "time" for ARG seconds each, "runs" for ARG executions each, or "ci" for the executions
# tests/fuzz/ci-runs.txt gives each (ARG ignored); FUZZ_JOBS targets at a time (default: the CPU count; each target
# is one process with its own seed and count, so running them side by side changes no result). FUZZ_SEED (default 1 in "ci" mode, random
# otherwise) fixes libFuzzer's seed. New
# inputs go to a scratch copy, never into tests/fuzz/corpus; a crash, leak, UB report or hang (10 s on one input) is
# saved as BUILD_DIR/fuzz-artifacts/<target>-crash-... Prints one table row per target: executions, crashes, seconds.
# Exit 1 when any target crashed. FUZZ_TARGETS="fuzz_fw fuzz_ih" runs only those.
set -uo pipefail
cd "$(dirname "$0")/../.."
dir=$1 mode=$2 arg=$3
case $mode in
  time) limit=(-max_total_time="$arg") ;;
  runs) limit=(-runs="$arg") ;;
  ci) limit=() ;;
  *) echo "usage: $0 BUILD_DIR time|runs|ci N" >&2; exit 2 ;;
esac
seed=()
if [ -n "${FUZZ_SEED:-}" ]; then seed=(-seed="$FUZZ_SEED"); elif [ "$mode" = ci ]; then seed=(-seed=1); fi
targets=${FUZZ_TARGETS:-$(tests/fuzz/targets.sh)}
art="$dir/fuzz-artifacts"
mkdir -p "$art"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
jobs_max=${FUZZ_JOBS:-$(nproc 2>/dev/null || echo 1)}
# One target: its table row in $work/$t.row, its status in $work/$t.rc.
run_one() {
  local t=$1 exe="$dir/tests/fuzz/$1" log="$art/$1.log" n rc start secs execs crashes
  local lim=("${limit[@]}")
  if [ ! -x "$exe" ]; then
    echo "fuzz: $exe is not built (tests/fuzz/build-fuzz.sh $dir)" >&2
    echo 1 >"$work/$t.rc"
    return
  fi
  mkdir -p "$work/$t"
  if [ "$mode" = ci ]; then
    n=$(awk -v t="$t" '$1 == t { print $2 }' tests/fuzz/ci-runs.txt)
    if [ -z "$n" ]; then
      echo "fuzz: $t has no line in tests/fuzz/ci-runs.txt" >&2
      echo 1 >"$work/$t.rc"
      return
    fi
    lim=(-runs="$n")
  fi
  start=$(date +%s%N)
  "$exe" "${lim[@]}" "${seed[@]}" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$art/$t-" \
    "$work/$t" "tests/fuzz/corpus/$t" >"$log" 2>&1
  rc=$?
  secs=$(awk -v a="$start" -v b="$(date +%s%N)" 'BEGIN { printf "%.1f", (b - a) / 1e9 }')
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  crashes=0
  if [ $rc -ne 0 ]; then
    crashes=1
    { echo "fuzz: $t failed (exit $rc); the last lines of $log:"; tail -30 "$log"; } >"$work/$t.err"
  fi
  printf '%-18s %12s %8s %8s\n' "$t" "${execs:-?}" "$crashes" "$secs" >"$work/$t.row"
  echo "$crashes" >"$work/$t.rc"
}
for t in $targets; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do wait -n; done
  run_one "$t" &
done
wait
status=0
printf '%-18s %12s %8s %8s\n' target executions crashes seconds
for t in $targets; do
  [ -f "$work/$t.err" ] && cat "$work/$t.err" >&2
  [ -f "$work/$t.row" ] && cat "$work/$t.row"
  [ "$(cat "$work/$t.rc" 2>/dev/null || echo 1)" = 0 ] || status=1
done
exit $status
