#!/bin/sh
# tests/unit/cdna3/build_code.sh: turn test sources into raw gfx942 code for the emulator.
#   asm TOOLS... in.s out.bin out.sym  -- llvm-mc object; .text as raw bytes; symbol table (llvm-nm)
#   ll  TOOLS... in.ll out.bin out.s   -- llc -O3 object; 64-byte kernel descriptor (.rodata) then .text
#   nowait TOOLS... in.s out.bin out.s -- an llc kernel (in.s) without its s_waitcnt vmcnt lines, assembled as above
# TOOLS: llvm-mc llc llvm-objcopy llvm-nm
set -eu
mode=$1 mc=$2 llc=$3 objcopy=$4 nm=$5 in=$6 out=$7 aux=$8
tmp=$out.o
target="-mcpu=gfx942"
if [ "$mode" = asm ]; then
  "$mc" --triple=amdgcn-amd-amdhsa $target -filetype=obj "$in" -o "$tmp"
  "$objcopy" -O binary --only-section=.text "$tmp" "$out"
  "$nm" "$tmp" > "$aux"
else
  if [ "$mode" = nowait ]; then
    sed '/s_waitcnt vmcnt/d' "$in" > "$aux"
    "$mc" --triple=amdgcn-amd-amdhsa $target -filetype=obj "$aux" -o "$tmp"
  else
    "$llc" -O3 -mtriple=amdgcn-amd-amdhsa $target "$in" -o "$aux"
    "$llc" -O3 -mtriple=amdgcn-amd-amdhsa $target -filetype=obj "$in" -o "$tmp"
  fi
  "$objcopy" -O binary --only-section=.rodata "$tmp" "$out.kd"
  "$objcopy" -O binary --only-section=.text "$tmp" "$out.text"
  test "$(wc -c < "$out.kd")" -eq 64 || { echo "$in: expected one 64-byte kernel descriptor in .rodata" >&2; exit 1; }
  cat "$out.kd" "$out.text" > "$out"
  rm -f "$out.kd" "$out.text"
fi
rm -f "$tmp"
