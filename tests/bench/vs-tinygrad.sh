#!/usr/bin/env bash
# tests/bench/vs-tinygrad.sh: baregpu beside tinygrad, both measured in this run on this machine, each figure the
# median of RUNS (default 5) runs, with the ratios.
#   replayed launch on CPU      ours: bench-launch CPU (re-submit, wall and submitting-thread CPU ns)
#                               tinygrad: a TinyJit'd one-kernel function replayed (tinygrad/tg_bench.py launch)
#   tiny suite cold and warm    ours: bench-compute's tiny_kernels() with an empty kernel cache, then again with it
#                               filled (new context); tinygrad: the same computations (tg_bench.py tiny) in a new
#                               process with an empty CACHEDB (cold), then in another with that CACHEDB (warm)
#   fp32 matmul 512^3, 1024^3   ours: bench-compute (the generated kernel on CPU, best of 3); tinygrad: tg_bench.py
#                               matmul (best of 3), both beside OpenBLAS as bench-compute measures it
#   USB transfers per launch    ours: bench-usb (MOCKUSB+AMD); tinygrad: its MOCKUSB+AMD (test/mockgpu/usb.py), when
#                               it runs here (it fetches AMD firmware from the network); otherwise it says why not
# Usage: tests/bench/vs-tinygrad.sh TINYGRAD_DIR [BUILD_DIR]   (BUILD_DIR default build/; RUNS=N for another count;
# TG_LAUNCHES=N replayed tinygrad launches per run, default 2000). Runs python3 (standard library only) with
# TINYGRAD_DIR on PYTHONPATH and DEV=CPU (tinygrad compiles CPU kernels with clang). Not run in CI (no tinygrad there);
# tests/bench/meson.build checks its syntax and this usage path.
set -euo pipefail

usage() {
  echo "usage: $0 TINYGRAD_DIR [BUILD_DIR]   (a tinygrad checkout: git clone https://github.com/tinygrad/tinygrad)" >&2
  exit 2
}
[ $# -ge 1 ] && [ $# -le 2 ] || usage
tg=$1
if [ ! -d "$tg" ]; then
  echo "vs-tinygrad: TINYGRAD_DIR $tg does not exist (expected a tinygrad checkout)" >&2
  exit 2
fi
if [ ! -f "$tg/tinygrad/__init__.py" ]; then
  echo "vs-tinygrad: TINYGRAD_DIR $tg is not a tinygrad checkout (no tinygrad/__init__.py in it)" >&2
  exit 2
fi
tg=$(cd "$tg" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
build=${2:-$here/../../build}
bench=$build/tests/bench
for b in bench-launch bench-compute; do
  [ -x "$bench/$b" ] || { echo "vs-tinygrad: $bench/$b is missing: build baregpu first (ninja -C $build)" >&2; exit 2; }
done
runs=${RUNS:-5}
tg_launches=${TG_LAUNCHES:-2000}
[[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "vs-tinygrad: RUNS=$runs: expected a positive integer" >&2; exit 2; }
[[ $tg_launches =~ ^[1-9][0-9]*$ ]] || { echo "vs-tinygrad: TG_LAUNCHES=$tg_launches: expected a positive integer" >&2; exit 2; }
tmp=$(mktemp -d /tmp/vs-tinygrad.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# median of the numbers on stdin ("nan" when none)
median() { sort -g | awk '{ a[NR] = $1 } END { if (!NR) print "nan"; else if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
# value of KEY in the "figures: WHAT ..." lines of FILE (one per line, all runs)
fig() { grep -h "^figures: $2\( \|$\)" "$1" | tr ' ' '\n' | sed -n "s/^$3=//p"; }
# like fig, restricted to the lines that also hold SEL (e.g. n=512)
figsel() { grep -h "^figures: $2 .*\b$3\b" "$1" | tr ' ' '\n' | sed -n "s/^$4=//p"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "nan" || b == "nan" || b + 0 == 0) print "n/a"; else printf "%.2fx", a / b }'; }
tgpy() { (cd "$tmp" && PYTHONPATH="$tg" DEV=${TG_DEV:-CPU} CACHEDB=${CACHEDB:-$tmp/misc.db} python3 "$here/tinygrad/tg_bench.py" "$@"); }

echo "vs-tinygrad: $runs runs each; tinygrad $(git -C "$tg" log -1 --format='%h %cs' 2>/dev/null || echo '(not a git checkout)') at $tg"

# ---- ours ----
: > "$tmp/launch.ours"
: > "$tmp/compute.ours"
for i in $(seq "$runs"); do
  "$bench/bench-launch" CPU 20000 >> "$tmp/launch.ours"
  "$bench/bench-compute" 512 1024 >> "$tmp/compute.ours"
done
ours_usb=nan
if [ -x "$bench/bench-usb" ]; then
  : > "$tmp/usb.ours"
  for i in $(seq "$runs"); do "$bench/bench-usb" 100 >> "$tmp/usb.ours" 2>&1 || true; done
  ours_usb=$(awk '/^baregpu \(kargs\+ring\+wptr, doorbell\)/ { print $(NF - 2) }' "$tmp/usb.ours" | median)
fi

# ---- tinygrad ----
: > "$tmp/launch.tg"
: > "$tmp/cold.tg"
: > "$tmp/warm.tg"
: > "$tmp/matmul.tg"
: > "$tmp/usb.tg"
for i in $(seq "$runs"); do
  tgpy launch "$tg_launches" >> "$tmp/launch.tg"
  rm -f "$tmp/cache.db"
  CACHEDB="$tmp/cache.db" tgpy tiny >> "$tmp/cold.tg"
  CACHEDB="$tmp/cache.db" tgpy tiny >> "$tmp/warm.tg"
  for n in 512 1024; do CACHEDB="$tmp/cache.db" tgpy matmul "$n" >> "$tmp/matmul.tg"; done
done
tg_usb=nan
tg_usb_why=""
if CACHEDB="$tmp/usb.db" TG_DEV=MOCKUSB+AMD tgpy usb 100 > "$tmp/usb.tg" 2> "$tmp/usb.err"; then
  for i in $(seq 2 "$runs"); do CACHEDB="$tmp/usb.db" TG_DEV=MOCKUSB+AMD tgpy usb 100 >> "$tmp/usb.tg" 2>> "$tmp/usb.err"; done
  tg_usb=$(fig "$tmp/usb.tg" usb transfers_per_launch | median)
else
  tg_usb_why=$(grep -v '^\s' "$tmp/usb.err" | tail -n 1 | cut -c1-160)
  if grep -q fetch_fw "$tmp/usb.err"; then
    tg_usb_why="its emulated AMD GPU loads firmware through fetch_fw (downloaded from gitlab's linux-firmware) and that failed: $tg_usb_why"
  fi
fi

# ---- table ----
o_rep=$(fig "$tmp/launch.ours" "dev=CPU" resubmit_ns | median)
o_repc=$(fig "$tmp/launch.ours" "dev=CPU" resubmit_cpu_ns | median)
t_rep=$(fig "$tmp/launch.tg" launch replay_ns | median)
t_repc=$(fig "$tmp/launch.tg" launch replay_cpu_ns | median)
o_cold=$(fig "$tmp/compute.ours" tiny cold_s | median)
o_warm=$(fig "$tmp/compute.ours" tiny warm_s | median)
t_cold=$(fig "$tmp/cold.tg" tiny seconds | median)
t_warm=$(fig "$tmp/warm.tg" tiny seconds | median)
row() { printf '  %-44s %14s %14s %12s\n' "$@"; }
echo
row "" "baregpu" "tinygrad" "tinygrad/ours"
row "replayed launch on CPU, wall ns" "$o_rep" "$t_rep" "$(ratio "$t_rep" "$o_rep")"
row "replayed launch on CPU, thread CPU ns" "$o_repc" "$t_repc" "$(ratio "$t_repc" "$o_repc")"
row "tiny suite on CPU, cold cache, s" "$o_cold" "$t_cold" "$(ratio "$t_cold" "$o_cold")"
row "tiny suite on CPU, warm cache, s" "$o_warm" "$t_warm" "$(ratio "$t_warm" "$o_warm")"
for n in 512 1024; do
  o=$(figsel "$tmp/compute.ours" matmul "n=$n" ours_gflops | median)
  t=$(figsel "$tmp/matmul.tg" matmul "n=$n" gflops | median)
  b1=$(figsel "$tmp/compute.ours" matmul "n=$n" blas1_gflops | median)
  bn=$(figsel "$tmp/compute.ours" matmul "n=$n" blasn_gflops | median)
  row "fp32 matmul ${n}^3 on CPU, GFLOPS (ours/tg)" "$o" "$t" "$(ratio "$o" "$t")"
  row "  OpenBLAS 1 thread / all cores, GFLOPS" "$b1" "$bn" ""
  row "  ours / OpenBLAS 1 thread, all cores" "$(ratio "$o" "$b1")" "$(ratio "$o" "$bn")" ""
done
if [ -n "$tg_usb_why" ]; then
  row "USB transfers per launch (MOCKUSB+AMD)" "$ours_usb" "n/a" ""
  echo "  tinygrad's USB figure not measurable in this run: $tg_usb_why"
else
  row "USB transfers per launch (MOCKUSB+AMD)" "$ours_usb" "$tg_usb" "$(ratio "$tg_usb" "$ours_usb")"
fi
grep -h "OpenBLAS: core" "$tmp/compute.ours" | head -n 1
echo "  (medians of $runs runs; times: lower is better, GFLOPS: higher is better; a ratio above 1 favours baregpu)"
