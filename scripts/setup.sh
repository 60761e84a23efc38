#!/usr/bin/env bash
# scripts/setup.sh: install what a fresh Debian machine lacks, then configure and build into build/.
# Usage: scripts/setup.sh [builddir] [meson options...]
set -euo pipefail
cd "$(dirname "$0")/.."
pkgs=(meson ninja-build pkg-config gcc check libpciaccess-dev libusb-1.0-0-dev liburing-dev python3 cppcheck)
# LLVM-C for AMD GPU code generation: llvm-22-dev, else llvm-19-dev (the first installed or with an
# apt candidate); without either baregpu builds, and AMD kernels report what to install.
for v in 22 19; do
  if dpkg-query -W -f='${Status}' "llvm-$v-dev" 2>/dev/null | grep -q "install ok installed" ||
     apt-cache policy "llvm-$v-dev" 2>/dev/null | grep -q 'Candidate: [^(]'; then
    pkgs+=("llvm-$v-dev")
    break
  fi
done
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "setup: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi
builddir=${1:-build}
shift || true
if [ -f "$builddir/build.ninja" ]; then
  meson setup --reconfigure "$builddir" "$@" >/dev/null
else
  meson setup "$builddir" "$@" >/dev/null
fi
ninja -C "$builddir"
