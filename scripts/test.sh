#!/usr/bin/env bash
# scripts/test.sh: set up, build and run every test twice: a normal build (build/) and an
# AddressSanitizer + UndefinedBehaviorSanitizer build (build-asan/). Ends with Check's totals and
# one line "N passed, N failed, N skipped".
set -uo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh build || exit 1
scripts/setup.sh build-asan -Db_sanitize=address,undefined -Db_lundef=false || exit 1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export ASAN_OPTIONS=detect_leaks=1
status=0
for b in build build-asan; do
  echo "== meson test ($b)"
  meson test -C "$b" --no-rebuild --print-errorlogs || status=1
done
python3 scripts/test_summary.py build/meson-logs/testlog.json build-asan/meson-logs/testlog.json || status=1
exit $status
