/* tests/mockgpu/cdna3/cdna3_disasm.c: one instruction's text for failure reports, from LLVM's disassembler
 * (llvm-mc-22 --disassemble -mcpu=gfx942) when it is on PATH. Only reports call it. (The RDNA3 core's
 * rdna3_disasm is fixed to gfx1100; a shared helper taking the -mcpu would replace this file.) */
#include "cdna3_internal.h"

#include <stdio.h>
#include <string.h>

/* The first instruction of n dwords (zeros after them), or false when llvm-mc printed none. */
static bool run_mc(const uint32_t *enc, unsigned n, char *buf, size_t size) {
  char cmd[512] = "exec 2>/dev/null; printf '", *o = cmd + strlen(cmd);
  for (unsigned i = 0; i < 12; i++) {
    uint32_t b = i / 4 < n ? (enc[i / 4] >> (8 * (i % 4))) & 0xff : 0;
    o += snprintf(o, (size_t)(cmd + sizeof cmd - o), "0x%02x ", b);
  }
  snprintf(o, (size_t)(cmd + sizeof cmd - o),
           "' | (llvm-mc-22 --disassemble -triple=amdgcn-amd-amdhsa -mcpu=gfx942 || "
           "llvm-mc --disassemble -triple=amdgcn-amd-amdhsa -mcpu=gfx942)");
  FILE *p = popen(cmd, "r");
  if (!p) return false;
  char line[256];
  bool found = false;
  while (!found && fgets(line, sizeof line, p)) {
    char *s = line + strspn(line, " \t");
    if (*s == '.' || *s == '\n' || !*s) continue;
    s[strcspn(s, ";\n")] = 0;
    for (size_t len = strlen(s); len && (s[len - 1] == ' ' || s[len - 1] == '\t');) s[--len] = 0;
    snprintf(buf, size, "%s", s);
    found = true;
  }
  pclose(p);
  return found;
}

void cdna3_disasm(const uint32_t *enc, unsigned ndw, char *buf, size_t n) {
  /* llvm-mc 22 crashes, printing nothing, when the dwords after the first instruction end inside a literal
   * constant (a VOP with src 0xff and no dword after it): fewer dwords then give the first instruction alone. */
  for (unsigned k = ndw < 3 ? ndw : 3; k >= 1; k--)
    if (run_mc(enc, k, buf, n)) return;
  snprintf(buf, n, "no disassembler");
}
