#!/usr/bin/env bash
# tests/bench/test_vs_tinygrad.sh: what CI can check of vs-tinygrad.sh without tinygrad: the script and its Python
# snippet parse (bash -n, py_compile into a temporary file), no argument prints the usage and exits 2, a missing or
# non-tinygrad TINYGRAD_DIR is named and exits 2, and the snippet's own usage exits 2.
set -u
here=$(cd "$(dirname "$0")" && pwd)
script=$here/vs-tinygrad.sh
snippet=$here/tinygrad/tg_bench.py
tmp=$(mktemp -d /tmp/test-vs-tinygrad.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { # DESCRIPTION WANT_RC WANT_TEXT COMMAND...
  local what=$1 want_rc=$2 want=$3 rc
  shift 3
  "$@" > "$tmp/out" 2>&1
  rc=$?
  if [ "$rc" -ne "$want_rc" ] || { [ -n "$want" ] && ! grep -q -- "$want" "$tmp/out"; }; then
    echo "FAIL: $what: exit $rc (expected $want_rc), output:"; cat "$tmp/out"; echo "(expected it to contain '$want')"
    fail=1
  else
    echo "ok: $what"
  fi
}
check "bash -n vs-tinygrad.sh" 0 "" bash -n "$script"
check "py_compile tg_bench.py" 0 "" python3 -c 'import py_compile, sys; py_compile.compile(sys.argv[1], cfile=sys.argv[2], doraise=True)' "$snippet" "$tmp/tg_bench.pyc"
check "no argument: usage, exit 2" 2 "usage: .*TINYGRAD_DIR" bash "$script"
check "three arguments: usage, exit 2" 2 "usage: .*TINYGRAD_DIR" bash "$script" a b c
check "missing TINYGRAD_DIR named" 2 "TINYGRAD_DIR $tmp/nothing-here does not exist" bash "$script" "$tmp/nothing-here"
mkdir -p "$tmp/not-tinygrad"
check "a folder that is no tinygrad checkout" 2 "is not a tinygrad checkout" bash "$script" "$tmp/not-tinygrad"
check "snippet usage, exit 2" 2 "usage: tg_bench.py" python3 "$snippet" bogus
exit $fail
