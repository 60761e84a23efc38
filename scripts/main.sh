#!/usr/bin/env bash
# scripts/main.sh: the main job. Set up and build, list GPUs with hcq_smi (also every PCI function and the
# emulated devices), then run the HCQ conformance suite, bg-tiny and the ONNX backend test data on the default
# device (DEV, else the first GPU, else CPU), the several-devices conformance on every pair of present devices and
# on two emulated GPUs, and bg-tiny on the emulated AMD GPU. A build without LLVM or the mock module fails here unless
# BG_TEST_PARTIAL=1 (scripts/build_features.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh build
scripts/build_features.sh build
echo "== hcq_smi list"
build/tools/hcq_smi list
echo "== hcq_smi list --all (every PCI function, and the emulated devices when the mock module is built)"
build/tools/hcq_smi list --all
echo "== HCQ conformance on ${DEV:-the default device}"
build/tests/conformance/hcq-conformance --default
echo "== bg-tiny (tinygrad's test_tiny) on ${DEV:-the default device}"
build/tools/bg-tiny
echo "== ONNX backend test data (libonnx-testdata) on ${DEV:-the default device}: pass/fail/unsupported per category"
# Checked against the committed expected-pass list where the device has one (CPU, MOCKPCI+AMD), else the table only.
onnx_dev=$(build/tools/bg-onnx --device)
case "$onnx_dev" in
  CPU|MOCKPCI+AMD) tests/onnx/run.sh "$onnx_dev" ;;
  *) tests/onnx/run.sh "$onnx_dev" --no-check ;;
esac
echo "== several devices: hcq-multidev on every pair of the present devices (two CPU devices when there is one)"
build/tests/conformance/hcq-multidev --present
if [ -f build/tests/mockgpu/libbaregpu-mock.so ]; then
  echo "== several devices: two emulated GPUs on one emulated PCI switch (MOCKGPU_COUNT=2: peer-to-peer)"
  MOCKGPU_COUNT=2 build/tests/conformance/hcq-multidev --expect=p2p MOCKPCI+AMD:0,MOCKPCI+AMD:1
fi
# The emulated GPU runs LLVM-compiled kernels on its RDNA3 shader-core model: needs both in the build.
if [ -f build/tests/mockgpu/libbaregpu-mock.so ] && grep -q '^#define BG_HAVE_LLVM 1' build/bg_config.h; then
  echo "== bg-tiny on the emulated AMD GPU (MOCKPCI+AMD)"
  build/tools/bg-tiny --dev MOCKPCI+AMD
else
  echo "== bg-tiny on MOCKPCI+AMD: not run (BG_TEST_PARTIAL=1 and the build has no mock module or no LLVM)"
fi
