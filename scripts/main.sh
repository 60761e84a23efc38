#!/usr/bin/env bash
# scripts/main.sh: the main job. Set up and build, list GPUs with hcq_smi, then run the HCQ
# conformance suite and bg-tiny on the default device (DEV, else the first GPU, else CPU).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh build
echo "== hcq_smi list"
build/tools/hcq_smi list
echo "== HCQ conformance on ${DEV:-the default device}"
build/tests/conformance/hcq-conformance --default
echo "== bg-tiny (tinygrad's test_tiny) on ${DEV:-the default device}"
build/tools/bg-tiny
