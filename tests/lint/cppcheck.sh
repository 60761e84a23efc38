#!/usr/bin/env bash
# Static analysis gate: cppcheck must report nothing on the project's C sources.
set -euo pipefail
src=$1
build=$2
cd "$src"
cppcheck --enable=warning,style,performance,portability --error-exitcode=1 --inline-suppr -q --std=c11 \
  -I include -I . -I "$build" --suppress=missingIncludeSystem \
  util formats ir platform hcq cpu compile tensor onnx am nv dist tools usb tests examples
echo "cppcheck: 1 passed, 0 failed"
