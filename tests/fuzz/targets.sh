#!/usr/bin/env bash
# tests/fuzz/targets.sh: the fuzz targets, one a line, as tests/fuzz/meson.build lists them (fuzz_targets).
awk '/^fuzz_targets = \[/,/\]/' "$(dirname "$0")/meson.build" | grep -o "'fuzz_[a-z_0-9]*'" | tr -d "'"
