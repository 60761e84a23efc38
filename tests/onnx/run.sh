#!/usr/bin/env bash
# tests/onnx/run.sh DEV [--update]: the ONNX backend test data (Debian's libonnx-testdata, ONNX 1.12) as a
# conformance suite on device DEV (README.md). Runs every test directory of the categories below through
# `bg-onnx --suite` (one process, one context), prints passed/failed/unsupported per category and overall, and
# FAILS when a test of the committed expected-pass list (expected-pass-<dev>.txt) does not pass. New passes are
# listed; --update rewrites the list from this run. Environment: BG_ONNX (the bg-onnx binary, default
# build/tools/bg-onnx), BG_ONNX_DATA (default /usr/share/libonnx-testdata/data), BG_ONNX_CATEGORIES (default all
# five), BG_ONNX_TEST_TIMEOUT (seconds per test, bg-onnx's default 300).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
[ $# -ge 1 ] || { echo "usage: tests/onnx/run.sh DEV [--update|--no-check]" >&2; exit 2; }
dev=$1
update=0
nocheck=0
case "${2:-}" in
  --update) update=1 ;;
  --no-check) nocheck=1 ;;   # only the table (a device without a committed list, e.g. a real GPU)
  "") ;;
  *) echo "run.sh: unknown option '$2' (expected --update or --no-check)" >&2; exit 2 ;;
esac
bin=${BG_ONNX:-$root/build/tools/bg-onnx}
data=${BG_ONNX_DATA:-/usr/share/libonnx-testdata/data}
cats=${BG_ONNX_CATEGORIES:-node pytorch-converted pytorch-operator simple real}
[ -x "$bin" ] || { echo "run.sh: no bg-onnx at $bin (build first, or set BG_ONNX)" >&2; exit 2; }
[ -d "$data" ] || { echo "run.sh: no ONNX test data at $data (scripts/setup.sh installs libonnx-testdata)" >&2; exit 2; }
slug=$(echo "$dev" | tr 'A-Z+:' 'a-z--')
list="$here/expected-pass-$slug.txt"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

dirs=()
for c in $cats; do
  for d in "$data/$c"/*/; do dirs+=("${d%/}"); done
done
# One bg-onnx process runs them all; when it dies (a crash, or exit 3 after a per-test timeout) it is restarted
# with the tests it had not reported, the one it died in counted as failed.
log="$work/log"
: > "$log"
start=$(date +%s)
todo=("${dirs[@]}")
while [ ${#todo[@]} -gt 0 ]; do
  "$bin" --suite --dev "$dev" "${todo[@]}" >> "$log" 2> "$work/stderr"
  rc=$?
  [ $rc -le 1 ] && break
  if [ $rc -eq 2 ]; then cat "$work/stderr" >&2; exit 2; fi
  done_n=$(grep -cE '^(PASS|FAIL|UNSUPPORTED) ' "$log")
  # tests reported so far are the first done_n of dirs (bg-onnx reports in order)
  rest=("${dirs[@]:$done_n}")
  if [ ${#rest[@]} -eq ${#todo[@]} ] || [ $rc -ne 3 ]; then
    # died without a line for the current test: count it failed and move on
    if [ ${#rest[@]} -gt 0 ]; then
      echo "FAIL ${rest[0]} (bg-onnx exited with status $rc: $(tail -n 1 "$work/stderr" | tr -d '\n'))" >> "$log"
      rest=("${rest[@]:1}")
    fi
  fi
  todo=("${rest[@]}")
done
secs=$(( $(date +%s) - start ))

# per category
declare -A pass fail unsup
tp=0; tf=0; tu=0
while read -r st path rest; do
  case $st in PASS|FAIL|UNSUPPORTED) ;; *) continue ;; esac
  rel=${path#"$data"/}
  cat=${rel%%/*}
  case $st in
    PASS) pass[$cat]=$(( ${pass[$cat]:-0} + 1 )); tp=$((tp + 1)); echo "$rel" >> "$work/passed" ;;
    FAIL) fail[$cat]=$(( ${fail[$cat]:-0} + 1 )); tf=$((tf + 1)) ;;
    UNSUPPORTED) unsup[$cat]=$(( ${unsup[$cat]:-0} + 1 )); tu=$((tu + 1)) ;;
  esac
done < "$log"
touch "$work/passed"
sort -o "$work/passed" "$work/passed"
[ -n "${BG_ONNX_VERBOSE:-}" ] && sed "s|$data/||" "$log"
printf '%-20s %7s %7s %12s\n' "onnx on $dev" passed failed unsupported
for c in $cats; do
  printf '%-20s %7d %7d %12d\n' "$c" "${pass[$c]:-0}" "${fail[$c]:-0}" "${unsup[$c]:-0}"
done
printf '%-20s %7d %7d %12d   (%d s)\n' overall "$tp" "$tf" "$tu" "$secs"

[ $nocheck -eq 1 ] && exit 0
if [ $update -eq 1 ]; then
  { echo "# tests/onnx/run.sh $dev --update: the tests that pass on $dev (one per line; README.md)"
    cat "$work/passed"; } > "$list"
  echo "run.sh: wrote $list ($tp tests)"
  exit 0
fi
[ -f "$list" ] || { echo "run.sh: no expected-pass list $list (run with --update to create it)" >&2; exit 1; }
grep -v '^#' "$list" | sed '/^$/d' | sort > "$work/expected"
regress=$(comm -23 "$work/expected" "$work/passed")
new=$(comm -13 "$work/expected" "$work/passed")
if [ -n "$new" ]; then
  echo "run.sh: $(echo "$new" | wc -l) new passes (tests/onnx/run.sh $dev --update adds them):"
  echo "$new" | sed 's/^/  /'
fi
if [ -n "$regress" ]; then
  echo "run.sh: FAILED: $(echo "$regress" | wc -l) tests of $list no longer pass:"
  for t in $regress; do
    grep -F " $data/$t " "$log" | head -n 1 | sed "s|$data/||;s/^/  /" || echo "  $t"
    grep -qF " $data/$t " "$log" || echo "  $t (not run)"
  done
  exit 1
fi
echo "run.sh: every expected pass passed"
