#!/usr/bin/env bash
# tests/stress/usb-order.sh [N [BUILDDIR [FIRST]]]: the emulated-USB suites under N host-order seeds (default 1,000,
# seeds FIRST.. FIRST+N-1, FIRST default 1): the usb unit suite (every USB test, the copy and stall fault tests, the
# ordering tests), bg-tiny and hcq-conformance on MOCKUSB+AMD, each through tests/mockgpu/usb-seeds.sh (the seed is
# MOCKUSB_SEED: the order the emulated bridge services its endpoint queues in; the firmware is strict). Stops at the
# first failing seed, printing the command that replays it; prints seeds and seconds per suite. meson test runs the
# same suites under 4 seeds (option usb_seeds).
set -uo pipefail
cd "$(dirname "$0")/../.."
n=${1:-1000}
b=${2:-build}
first=${3:-1}
case $n$first in *[!0-9]*) echo "usage: usb-order.sh [N [BUILDDIR [FIRST]]]" >&2; exit 2 ;; esac
plugin="$b/tests/mockgpu/libbaregpu-mock.so"
for f in "$b/tests/unit/usb/test_usb" "$b/tools/bg-tiny" "$b/tests/conformance/hcq-conformance" "$plugin"; do
  [ -e "$f" ] || { echo "usb-order: $f is missing: build $b first (scripts/setup.sh $b)" >&2; exit 2; }
done
export BG_MOCK_PLUGIN=$plugin BG_CACHE_DIR="$b/tests/kcache" BG_WAIT_TIMEOUT_MS=20000 USB_SEEDS=$n USB_SEED_FIRST=$first
status=0
run() {
  local name=$1 t0 rc
  shift
  t0=$(date +%s)
  tests/mockgpu/usb-seeds.sh "$n" "$@" | tail -n 3
  rc=${PIPESTATUS[0]}
  echo "usb-order: $name: $([ "$rc" -eq 0 ] && echo "$n seeds passed" || echo FAILED) in $(($(date +%s) - t0)) s"
  [ "$rc" -eq 0 ] || status=1
}
run "usb unit suite" "$b/tests/unit/usb/test_usb"
run "bg-tiny MOCKUSB+AMD" "$b/tools/bg-tiny" --dev MOCKUSB+AMD
run "hcq-conformance MOCKUSB+AMD" env DEV=MOCKUSB+AMD "$b/tests/conformance/hcq-conformance"
exit $status
