#!/usr/bin/env bash
# scripts/setup.sh: install what a fresh Debian machine lacks, then configure and build into build/.
# Usage: scripts/setup.sh [builddir] [meson options...]
set -euo pipefail
cd "$(dirname "$0")/.."
# linux-source-6.12: Linux AMD headers for the oracles of tests/unit/am (am-reg-offsets, am-smu-metrics); clang and
# libclang-rt-dev (its libFuzzer and sanitizer runtimes): the fuzz targets of tests/fuzz (scripts/test.sh).
# protobuf-c (library and protoc-c): the ONNX front end (onnx/); zlib: gzip'd datasets (examples/fashion_mnist.c);
# libonnx-testdata and dataset-fashion-mnist: the judges of tests/onnx and the Fashion-MNIST example.
# libopenmpi-dev and openmpi-bin (mpirun): libbaregpu-dist (dist/), its tests and the data-parallel example.
pkgs=(meson ninja-build pkg-config gcc check libpciaccess-dev libusb-1.0-0-dev liburing-dev libopenblas-dev python3 cppcheck
      linux-source-6.12 clang libclang-rt-dev libprotobuf-c-dev protobuf-c-compiler zlib1g-dev libonnx-testdata
      dataset-fashion-mnist libopenmpi-dev openmpi-bin)
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
# No pipe into a quiet grep under pipefail: grep -q exits at the first match, the writer dies of SIGPIPE
# (status 141) and the pipeline counts as failed. Capture the output, then match it.
installed() { local s; s=$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null) || return 1; [[ $s == *"install ok installed"* ]]; }
candidate() { local s; s=$(apt-cache policy "$1" 2>/dev/null) || return 1; [[ $s =~ Candidate:\ [^\(] ]]; }
# LLVM-C for AMD GPU code generation (and llc/llvm-mc for the shader-core tests): llvm-22-dev, else
# llvm-19-dev, whichever is installed or has an apt candidate. A fresh machine's package lists may be
# empty, so they are updated before deciding; without either, baregpu builds and AMD kernels say what
# to install.
llvm=""
for v in 22 19; do installed "llvm-$v-dev" && { llvm="llvm-$v-dev"; break; }; done
if [ -z "$llvm" ]; then
  $sudo apt-get update -qq
  for v in 22 19; do
    candidate "llvm-$v-dev" && { llvm="llvm-$v-dev"; break; }
  done
fi
[ -n "$llvm" ] && pkgs+=("$llvm") || echo "setup: no llvm-22-dev or llvm-19-dev in apt: building without LLVM"
missing=()
for p in "${pkgs[@]}"; do installed "$p" || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
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
