#!/usr/bin/env bash
# tests/fuzz/build-fuzz.sh BUILD_DIR: configure (once) and build the libFuzzer executables with clang into BUILD_DIR:
# the library instrumented for coverage (-fsanitize=fuzzer-no-link) and everything under ASan + UBSan. Only the fuzz
# targets are built, not the rest of the tree. Exit 3 (and a line saying why) when clang or its libFuzzer runtime
# is missing, so the caller can fall back to replaying the corpora.
set -euo pipefail
cd "$(dirname "$0")/../.."
dir=${1:-build-fuzz}
cc=${FUZZ_CC:-clang}
if ! command -v "$cc" >/dev/null; then
  echo "fuzz: no $cc: cannot build the libFuzzer targets"
  exit 3
fi
probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
printf 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { (void)d; (void)n; return 0; }\n' \
  > "$probe/p.c"
if ! "$cc" -fsanitize=fuzzer,address,undefined "$probe/p.c" -o "$probe/p" 2>"$probe/err"; then
  echo "fuzz: $cc cannot link -fsanitize=fuzzer (install libclang-rt-dev / the compiler-rt of $cc): $(head -1 "$probe/err")"
  exit 3
fi
if [ ! -f "$dir/build.ninja" ]; then
  CC="$cc" meson setup "$dir" --buildtype=debugoptimized -Db_sanitize=address,undefined -Db_lundef=false \
    -Dc_args=-fsanitize=fuzzer-no-link -Dwerror=false -Dllvm=disabled -Dmock=false >"$probe/setup.log" 2>&1 ||
    { cat "$probe/setup.log"; exit 1; }
fi
targets=$(tests/fuzz/targets.sh)
ninja -C "$dir" $(for t in $targets; do echo "tests/fuzz/$t"; done) >/dev/null
echo "$targets"
