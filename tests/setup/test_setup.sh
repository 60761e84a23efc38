#!/usr/bin/env bash
# tests/setup/test_setup.sh: scripts/setup.sh's choice of packages, without network or root. apt-get, apt-cache,
# dpkg-query, sudo, meson and ninja are replaced by stand-ins on PATH that record their calls; dpkg-query reports
# nothing installed. apt-cache prints its "Candidate:" line first and more lines after a pause, as the real one
# can, so apt-cache piped into a quiet grep under pipefail dies of SIGPIPE (status 141), the bug that left every
# fresh machine without LLVM.
set -uo pipefail
src=$(realpath "${1:-$(dirname "$0")/../..}")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0

stub() { printf '#!/usr/bin/env bash\n%s\n' "$2" >"$tmp/bin/$1"; chmod +x "$tmp/bin/$1"; }

# run_case NAME CANDIDATES EXPECT_LLVM: CANDIDATES are the LLVM packages apt has; EXPECT_LLVM the one that must be
# installed ("" for none, then setup must say it builds without LLVM).
run_case() {
  local name=$1 candidates=$2 want=$3
  rm -rf "$tmp/bin" "$tmp/log"
  mkdir -p "$tmp/bin"
  : >"$tmp/log"
  stub dpkg-query 'echo "dpkg-query $*" >>"'"$tmp/log"'"; exit 1'
  stub apt-get 'echo "apt-get $*" >>"'"$tmp/log"'"; exit 0'
  stub sudo '"$@"'
  stub meson 'echo "meson $*" >>"'"$tmp/log"'"; exit 0'
  stub ninja 'echo "ninja $*" >>"'"$tmp/log"'"; exit 0'
  stub apt-cache '
echo "apt-cache $*" >>"'"$tmp/log"'"
pkg=${2:-}
echo "$pkg:"
echo "  Installed: (none)"
case " '"$candidates"' " in
  *" $pkg "*) echo "  Candidate: 1:99.0-1" ;;
  *) echo "  Candidate: (none)" ;;
esac
sleep 0.2
for i in $(seq 1 200); do echo "     1:99.0-$i 500"; done
exit 0'
  local out rc
  out=$(PATH="$tmp/bin:$PATH" bash "$src/scripts/setup.sh" "$tmp/build" 2>&1)
  rc=$?
  local install
  install=$(grep '^apt-get .*install' "$tmp/log" || true)
  local ok=1 why=""
  if [ $rc -ne 0 ]; then ok=0; why="setup.sh exited $rc: $out"; fi
  if [ -n "$want" ]; then
    case " $install " in *" $want "*) ;; *) ok=0; why+=" $want is not in the install list: '$install'";; esac
    for other in llvm-22-dev llvm-19-dev; do
      [ "$other" = "$want" ] && continue
      case " $install " in *" $other "*) ok=0; why+=" $other installed besides $want";; esac
    done
  else
    case "$install" in *llvm-*) ok=0; why+=" an LLVM package was installed: '$install'";; esac
    case "$out" in *"building without LLVM"*) ;; *) ok=0; why+=" setup did not say it builds without LLVM: $out";; esac
  fi
  for p in meson ninja-build check libpciaccess-dev libusb-1.0-0-dev liburing-dev libopenblas-dev; do
    case " $install " in *" $p "*) ;; *) ok=0; why+=" $p missing from the install list";; esac
  done
  grep -q '^apt-get update' "$tmp/log" || { ok=0; why+=" apt-get update was not run before choosing"; }
  grep -q "^meson setup $tmp/build" "$tmp/log" || { ok=0; why+=" meson setup was not run on the build dir"; }
  if [ $ok = 1 ]; then
    echo "PASS setup: $name"; passed=$((passed + 1))
  else
    echo "FAIL setup: $name:$why"; failed=$((failed + 1))
  fi
}

run_case "fresh machine, both LLVMs in apt: llvm-22-dev" "llvm-22-dev llvm-19-dev" llvm-22-dev
run_case "fresh machine, only LLVM 19 in apt: llvm-19-dev" "llvm-19-dev" llvm-19-dev
run_case "fresh machine, no LLVM in apt: says so" "" ""
# scripts/build_features.sh: a build without LLVM, the emulated-GPU module or libbaregpu-dist fails the test command unless
# BG_TEST_PARTIAL=1 opts out, and the message names the variable.
features_case() {
  local name=$1 llvm=$2 mock=$3 partial=$4 want_rc=$5 want_text=$6 dist=${7:-1}
  rm -rf "$tmp/fb"
  mkdir -p "$tmp/fb/tests/mockgpu" "$tmp/fb/dist"
  [ "$dist" = 1 ] && : >"$tmp/fb/dist/libbaregpu-dist.so"
  printf '#define BG_HAVE_LLVM %s\n#define BG_LLVM_VERSION "%s"\n' "$llvm" "$([ "$llvm" = 1 ] && echo 22.1.8 || echo none)" \
    >"$tmp/fb/bg_config.h"
  [ "$mock" = 1 ] && : >"$tmp/fb/tests/mockgpu/libbaregpu-mock.so"
  local out rc
  out=$(BG_TEST_PARTIAL=$partial bash "$src/scripts/build_features.sh" "$tmp/fb" 2>&1)
  rc=$?
  if [ $rc -eq "$want_rc" ] && [[ $out == *"$want_text"* ]]; then
    echo "PASS build features: $name"; passed=$((passed + 1))
  else
    echo "FAIL build features: $name: status $rc (want $want_rc), output '$out' lacks '$want_text'"; failed=$((failed + 1))
  fi
}
features_case "LLVM and module: runs" 1 1 0 0 "LLVM 22.1.8, emulated-GPU module: yes"
features_case "no LLVM: fails naming BG_TEST_PARTIAL" 0 1 0 1 "BG_TEST_PARTIAL=1"
features_case "no module: fails" 1 0 0 1 "no emulated-GPU module"
features_case "no LLVM, BG_TEST_PARTIAL=1: runs and says so" 0 1 1 0 "running a partial suite"
features_case "no libbaregpu-dist (MPI not found): fails" 1 1 0 1 "no libbaregpu-dist" 0

echo "setup: $passed passed, $failed failed"
[ $failed -eq 0 ]
