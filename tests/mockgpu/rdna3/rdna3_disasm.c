/* tests/mockgpu/rdna3/rdna3_disasm.c: one instruction's disassembly for failure reports, from
 * LLVM's disassembler (llvm-mc --disassemble, wave32, for the dispatch's -mcpu) when one is on PATH. Only reports
 * call it, so a process per call is fine. */
#include "rdna3.h"

#include <stdio.h>
#include <string.h>

void rdna3_disasm(const uint32_t *enc, unsigned ndw, char *buf, size_t n) { rdna3_disasm_mcpu("gfx1100", enc, ndw, buf, n); }

void rdna3_disasm_mcpu(const char *mcpu, const uint32_t *enc, unsigned ndw, char *buf, size_t n) {
  char cmd[512], bytes[64] = "";
  size_t o = 0;
  if (ndw > 3) ndw = 3;
  /* Zero dwords after the given ones: llvm-mc 22 crashes on an instruction cut short, and only
   * the first instruction is read back. */
  for (unsigned i = 0; i < 3; i++)
    for (unsigned b = 0; b < 4; b++)
      o += (size_t)snprintf(bytes + o, sizeof bytes - o, "0x%02x ", i < ndw ? (enc[i] >> (8 * b)) & 0xff : 0);
  snprintf(cmd, sizeof cmd,
           "exec 2>/dev/null; for t in llvm-mc-22 llvm-mc-19 llvm-mc; do if command -v $t >/dev/null; then "
           "echo '%s' | $t --disassemble -triple=amdgcn-amd-amdhsa -mcpu=%s -mattr=+wavefrontsize32 2>/dev/null; "
           "exit; fi; done",
           bytes, mcpu);
  snprintf(buf, n, "no disassembler");
  FILE *p = popen(cmd, "r");
  if (!p) return;
  char line[256];
  while (fgets(line, sizeof line, p)) {
    char *s = line;
    while (*s == ' ' || *s == '\t') s++;
    if (*s == '.' || *s == '\n' || *s == 0) continue;
    char *end = strpbrk(s, ";\n");
    if (end) *end = 0;
    size_t len = strlen(s);
    while (len && (s[len - 1] == ' ' || s[len - 1] == '\t')) s[--len] = 0;
    snprintf(buf, n, "%s", s);
    break;
  }
  pclose(p);
}
