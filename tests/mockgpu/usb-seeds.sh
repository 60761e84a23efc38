#!/usr/bin/env bash
# tests/mockgpu/usb-seeds.sh COUNT CMD [ARGS...]: run CMD once per host-order seed of the emulated USB bridge
# (tests/mockgpu/asm24.h: MOCKUSB_SEED draws the order its three endpoint queues are serviced in), seeds
# FIRST..FIRST+COUNT-1 (FIRST = $USB_SEED_FIRST, default 1; $USB_SEEDS, when set, replaces COUNT: the stress
# script's 1,000). The first seed's output is printed (so scripts/test_summary.py counts its Check totals); a later
# seed's output is kept only when it fails. On a failure the seed and the command that replays it are printed and
# the script exits 1. One line per seed on success.
set -uo pipefail
count=${USB_SEEDS:-${1:?usage: usb-seeds.sh COUNT CMD [ARGS...]}}
shift
[ $# -ge 1 ] || { echo "usage: usb-seeds.sh COUNT CMD [ARGS...]" >&2; exit 2; }
case $count in ''|*[!0-9]*) echo "usb-seeds.sh: COUNT must be a number, not '$count'" >&2; exit 2 ;; esac
first=${USB_SEED_FIRST:-1}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for ((s = first; s < first + count; s++)); do
  start=$(date +%s%N)
  MOCKUSB_SEED=$s "$@" >"$out" 2>&1
  rc=$?
  secs=$(awk -v a="$start" -v b="$(date +%s%N)" 'BEGIN { printf "%.1f", (b - a) / 1e9 }')
  if [ $rc -ne 0 ]; then
    cat "$out"
    echo "usb-seeds: FAILED under MOCKUSB_SEED=$s (exit $rc after ${secs} s); replay: MOCKUSB_SEED=$s $*"
    exit 1
  fi
  [ "$s" -eq "$first" ] && cat "$out"
  echo "usb-seeds: MOCKUSB_SEED=$s ok (${secs} s)"
done
echo "usb-seeds: $count seeds passed ($first..$((first + count - 1)))"
