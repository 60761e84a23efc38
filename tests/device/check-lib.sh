#!/usr/bin/env bash
# tests/device/check-lib.sh: the step runner shared by the device checks (nv-check, usb-check), sourced by them.
# The caller sets: tool (its name, for messages), out (OUTDIR, absolute), budget (seconds for the whole run); then
# calls check_init. Steps append JSON objects to steps[]; failed becomes 1 when one fails; check_build sets B (the
# build directory) from builddir or builds $root/build; check_results writes OUTDIR/results.json and returns the exit
# status.

check_init() {
  start_ms=$(($(date +%s%N) / 1000000))
  steps=()     # one JSON object per step
  failed=0
  last_rc=0    # of the last step run
}

# A JSON string for $1 (RFC 8259: backslash, quote and control characters escaped).
json_str() {
  local s=$1
  s=${s//\\/\\\\}
  s=${s//\"/\\\"}
  s=${s//$'\n'/\\n}
  s=${s//$'\t'/\\t}
  s=${s//$'\r'/\\r}
  s=$(printf '%s' "$s" | tr -d '\000-\037')
  printf '"%s"' "$s"
}
ms_now() { echo $(($(date +%s%N) / 1000000)); }
secs() { printf '%d.%03d' $(($1 / 1000)) $(($1 % 1000)); }

# ---- figure parsers: each prints JSON members ("k": v, ...) read from the step's log ($1) ----
p_none() { :; }
# A "figures: k=v ..." line (the last one; numbers stay numbers), as JSON members.
p_figures() {
  local l kv k v sep=""
  l=$(grep '^figures: ' "$1" | tail -n1)
  for kv in ${l#figures: }; do
    k=${kv%%=*}
    v=${kv#*=}
    v=${v#\"}
    v=${v%\"}
    if [[ $v =~ ^-?[0-9]+(\.[0-9]+)?$ ]]; then printf '%s"%s": %s' "$sep" "$k" "$v"
    else printf '%s"%s": %s' "$sep" "$k" "$(json_str "$v")"; fi
    sep=", "
  done
}
# Every "figures:" line of the log merged (later keys after earlier ones).
p_all_figures() {
  local l sep="" f
  while IFS= read -r l; do
    f=$(p_figures <(printf '%s\n' "$l"))
    [ -n "$f" ] && printf '%s%s' "$sep" "$f" && sep=", "
  done < <(grep '^figures: ' "$1")
}

# Check's summary "100%: Checks: 98, Failures: 0, Errors: 0" and the PTX-compiler lines of the NV suites.
p_unit() {
  local l c f e sk
  l=$(grep -o 'Checks: [0-9]*, Failures: [0-9]*, Errors: [0-9]*' "$1" | tail -n1)
  [ -n "$l" ] || return 0
  read -r c f e <<<"$(echo "$l" | grep -o '[0-9][0-9]*' | tr '\n' ' ')"
  sk=$(grep -c '^SKIPPED' "$1")
  printf '"checks": %d, "failures": %d, "errors": %d, "skipped_cases": %d' "$c" "$f" "$e" "$sk"
  local px
  px=$(grep -o '^ptxas: .*' "$1" | head -n1)
  [ -n "$px" ] && printf ', "ptxas": %s' "$(json_str "${px#ptxas: }")"
  return 0
}
# "N passed, N failed, N skipped" (hcq-conformance's and bg-tiny's last line).
p_counts() {
  local l p f s
  l=$(grep -o '[0-9][0-9]* passed, [0-9][0-9]* failed, [0-9][0-9]* skipped' "$1" | tail -n1)
  [ -n "$l" ] || return 0
  read -r p f s <<<"$(echo "$l" | grep -o '[0-9][0-9]*' | tr '\n' ' ')"
  printf '"passed": %d, "failed": %d, "skipped": %d' "$p" "$f" "$s"
  local fl
  fl=$(grep -E '^FAIL' "$1" | head -n 8 | cut -c1-200)
  [ -n "$fl" ] && printf ', "first_failures": %s' "$(json_str "$fl")"
  return 0
}
# record NAME RC MS FIGURES [SKIPPED_WHY]
record() {
  local o
  o=$(printf '{"name": %s, "rc": %d, "seconds": %s, "log": %s, "figures": {%s}' "$(json_str "$1")" "$2" "$(secs "$3")" \
    "$(json_str "$1.log")" "$4")
  [ $# -ge 5 ] && o+=$(printf ', "skipped": %s' "$(json_str "$5")")
  steps+=("$o}")
}

# step NAME LIMIT_S PARSER CMD...: run CMD under timeout (never past the budget), log to OUTDIR/NAME.log.
step() {
  local name=$1 limit=$2 parser=$3
  shift 3
  local left=$((budget - ($(ms_now) - start_ms) / 1000))
  if [ "$left" -lt 5 ]; then
    echo "== $name: not run, the ${budget}s budget is spent"
    echo "not run: the ${budget}s budget of $tool was spent" >"$out/$name.log"
    record "$name" 124 0 "" "the ${budget}s budget was spent"
    failed=1
    return
  fi
  [ "$limit" -gt "$left" ] && limit=$left
  echo "== $name (limit ${limit}s): $*"
  local t0 rc ms figs
  t0=$(ms_now)
  timeout --kill-after=5 "$limit" "$@" >"$out/$name.log" 2>&1 </dev/null
  rc=$?
  ms=$(($(ms_now) - t0))
  figs=$("$parser" "$out/$name.log")
  record "$name" "$rc" "$ms" "$figs"
  last_rc=$rc
  if [ "$rc" -ne 0 ]; then
    failed=1
    [ "$rc" -eq 124 ] && echo "   TIMEOUT after ${limit}s"
    echo "   FAILED (rc $rc, $(secs "$ms")s); last lines of $out/$name.log:"
    tail -n 15 "$out/$name.log" | sed 's/^/   | /'
  else
    echo "   ok ($(secs "$ms")s) ${figs:0:300}"
  fi
}

# skip NAME WHY: a step this machine cannot run (not a failure).
skip() {
  echo "== $1: skipped: $2"
  echo "skipped: $2" >"$out/$1.log"
  record "$1" 0 0 "" "$2"
}

# A step whose output is also shown (driver version, class list, memory: the facts the run is about).
# (A failed step already showed its last lines.)
show() { [ "$last_rc" -eq 0 ] && [ -s "$out/$1.log" ] && sed 's/^/   | /' "$out/$1.log"; }

# Did the build make $1? (a meson option or a missing library turns some programs off)
have() { [ -x "$1" ] || [ -f "$1" ]; }

# The build: --builddir DIR as it is, else scripts/setup.sh build.
check_build() {
  if [ -n "$builddir" ]; then
    B=$(cd "$builddir" 2>/dev/null && pwd) || { echo "$tool: --builddir '$builddir' is not a directory" >&2; exit 2; }
    [ -f "$B/build.ninja" ] || { echo "$tool: --builddir '$B' is not a configured meson build (no build.ninja)" >&2; exit 2; }
    skip build "using the existing build $B"
  else
    B="$root/build"
    step build 240 p_none "$root/scripts/setup.sh" build
  fi
}

# results.json for mode $1; prints the one-line verdict; returns the exit status (0: every step passed).
check_results() {
  local mode=$1 total_ms commit
  total_ms=$(($(ms_now) - start_ms))
  commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)
  {
    printf '{\n  "tool": %s,\n  "mode": %s,\n  "date": %s,\n  "host": %s,\n  "commit": %s,\n' "$(json_str "$tool")" \
      "$(json_str "$mode")" "$(json_str "$(date -u +%Y-%m-%dT%H:%M:%SZ)")" "$(json_str "$(uname -n)")" "$(json_str "$commit")"
    printf '  "builddir": %s,\n  "budget_s": %d,\n  "seconds": %s,\n  "ok": %s,\n  "steps": [\n' "$(json_str "$B")" "$budget" \
      "$(secs "$total_ms")" "$([ "$failed" -eq 0 ] && echo true || echo false)"
    for i in "${!steps[@]}"; do
      printf '    %s%s\n' "${steps[$i]}" "$([ "$i" -lt $((${#steps[@]} - 1)) ] && echo ,)"
    done
    printf '  ]\n}\n'
  } >"$out/results.json"
  echo "$tool ($mode): $([ "$failed" -eq 0 ] && echo "all steps passed" || echo "FAILED"), $(secs "$total_ms")s; results: $out/results.json"
  return "$failed"
}
