#!/usr/bin/env bash
# scripts/test.sh: set up, build and run every test twice: a normal build (build/) and an
# AddressSanitizer + UndefinedBehaviorSanitizer build (build-asan/). Ends with Check's totals, the device
# runs that happened with the LLVM used, and one line "N passed, N failed, N skipped".
# A build without LLVM or without the emulated-GPU module cannot run the AMD device suites: that fails here
# unless BG_TEST_PARTIAL=1 is set (then only what the build has runs, and the summary says so).
set -uo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh build || exit 1
# The emulated-USB suites run under 4 host-order seeds in build/ (meson option usb_seeds; tests/stress/usb-order.sh
# is the long run) and under one (seed 1, a random order too) in the sanitizer build, which looks for memory errors,
# not orders.
scripts/setup.sh build-asan -Db_sanitize=address,undefined -Db_lundef=false -Dusb_seeds=1 || exit 1

# What each build has: LLVM (AMD code generation) and the emulated-GPU module (MOCKPCI/MOCKUSB).
scripts/build_features.sh build build-asan || exit 1

export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export ASAN_OPTIONS=detect_leaks=1
status=0
for b in build build-asan; do
  echo "== meson test ($b)"
  # The sanitizer build starts from the kernels the normal build compiled (compile/kcache.h: entries are keyed by the
  # IR text or C source and the compiler's version, so a hit is the same code object). Our code still renders every
  # kernel's IR under the sanitizers; only LLVM's and cc's uninstrumented back ends are not run again (~half of the
  # sanitizer suite's time on a cold cache). Cold compiles under the sanitizers still run: tests/unit/compile's
  # compile, kcache and llvm-host suites use fresh cache directories.
  if [ "$b" = build-asan ] && [ -d build/tests/kcache ]; then
    mkdir -p build-asan/tests/kcache && cp -an build/tests/kcache/. build-asan/tests/kcache/
  fi
  meson test -C "$b" --no-rebuild --print-errorlogs || status=1
done
python3 scripts/test_summary.py build/meson-logs/testlog.json build-asan/meson-logs/testlog.json || status=1
# The fuzz step (tests/fuzz/README.md): every fuzz target ~20 s (a fixed count from a fixed seed) under libFuzzer from its corpus, built with clang into
# build-fuzz/; where clang cannot build them, the corpora are replayed through build/ instead (and it says so).
echo "== fuzz (tests/fuzz/run-ci.sh)"
tests/fuzz/run-ci.sh build build-fuzz || status=1
exit $status
