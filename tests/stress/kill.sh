#!/bin/sh
# tests/stress/kill.sh [N [SEED [DEV]]]: the kill stress test (kill.c) with N kills (default 50), from a build in
# ${BUILD:-build}; prints the kills per phase, opens OK and cold/warm boots.
set -e
here=$(cd "$(dirname "$0")/../.." && pwd)
exec "$here/${BUILD:-build}/tests/stress/kill" "${1:-50}" "${2:-1}" "${3:-MOCKPCI+AMD}"
