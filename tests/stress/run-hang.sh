#!/usr/bin/env bash
# tests/stress/run-hang.sh [N] [builddir]: the full hang/fault recovery run (default 100 per kind) on MOCKPCI+AMD and
# MOCKUSB+AMD; prints recovered/total and the detection and recovery time distribution per interface and kind.
set -euo pipefail
n=${1:-100}
root="$(cd "$(dirname "$0")/../.." && pwd)"
build=${2:-$root/build}
exe="$build/tests/stress/hang/stress-hang"
[ -x "$exe" ] || { echo "run-hang: $exe not built (ninja -C $build tests/stress/hang/stress-hang)" >&2; exit 2; }
export BG_MOCK_PLUGIN="${BG_MOCK_PLUGIN:-$build/tests/mockgpu/libbaregpu-mock.so}"
export BG_CACHE_DIR="${BG_CACHE_DIR:-$build/tests/kcache}"
export BG_HANG_CHECK_MS="${BG_HANG_CHECK_MS:-100}"
export BG_WAIT_TIMEOUT_MS="${BG_WAIT_TIMEOUT_MS:-20000}"
exec "$exe" "$n" MOCKPCI MOCKUSB
