/* compile/llvm_nvptx.c: LLVM IR text -> PTX text through the LLVM-C API (parse, verify, default<O3>,
 * emit assembly: compile/llvm_emit.c). See llvm_nvptx.h. */
#include "compile/llvm_nvptx.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Core.h>
#include <llvm-c/Target.h>

#include "baregpu/error.h"
#include "compile/llvm_emit.h"

/* The processors baregpu targets, the PTX ISA version that introduced each (PTX ISA "Release
 * Notes": sm_80 7.0, sm_86 7.1, sm_89 and sm_90 7.8, sm_100 8.6, sm_120 8.7) and the first LLVM
 * release whose NVPTX backend knows it. An unknown processor name makes LLVM warn on stderr and
 * emit its default target, so names are checked against this table before LLVM sees them. */
static const struct {
  const char *sm, *features;
  unsigned llvm_major;
} SMS[] = {
    {"sm_80", "+ptx70", 11}, {"sm_86", "+ptx71", 12}, {"sm_89", "+ptx78", 16},
    {"sm_90", "+ptx78", 16}, {"sm_100", "+ptx86", 20}, {"sm_120", "+ptx87", 20},
};
enum { NSMS = sizeof SMS / sizeof *SMS };

const char *bg_nvptx_features(const char *sm) {
  for (unsigned i = 0; sm && i < NSMS; i++)
    if (!strcmp(SMS[i].sm, sm)) return SMS[i].features;
  return NULL;
}

static unsigned llvm_major(void) {
  unsigned major = 0, minor = 0, patch = 0;
  LLVMGetVersion(&major, &minor, &patch);
  return major;
}

bool bg_llvm_nvptx_knows(const char *sm) {
  for (unsigned i = 0; sm && i < NSMS; i++)
    if (!strcmp(SMS[i].sm, sm)) return llvm_major() >= SMS[i].llvm_major;
  return false;
}

void bg_llvm_nvptx_known(char *buf, size_t n) {
  size_t len = 0;
  if (!n) return;
  buf[0] = 0;
  for (unsigned i = 0; i < NSMS; i++) {
    if (!bg_llvm_nvptx_knows(SMS[i].sm)) continue;
    int w = snprintf(buf + len, n - len, "%s%s", len ? " " : "", SMS[i].sm);
    if (w < 0 || (size_t)w >= n - len) return;
    len += (size_t)w;
  }
}

static pthread_once_t g_init_once = PTHREAD_ONCE_INIT;
static void init_nvptx(void) {
  LLVMInitializeNVPTXTargetInfo();
  LLVMInitializeNVPTXTarget();
  LLVMInitializeNVPTXTargetMC();
  LLVMInitializeNVPTXAsmPrinter();
}

/* Does the PTX text declare `.target sm` (possibly followed by more, e.g. ", debug")? */
static bool declares_target(const char *ptx, const char *sm) {
  size_t n = strlen(sm);
  for (const char *p = strstr(ptx, ".target "); p; p = strstr(p + 1, ".target ")) {
    bool line_start = p == ptx || p[-1] == '\n';
    if (line_start && !strncmp(p + 8, sm, n) && (p[8 + n] == '\n' || p[8 + n] == ',' || p[8 + n] == ' ')) return true;
  }
  return false;
}

int bg_llvm_nvptx_compile(const char *ir, const char *sm, char **ptx) {
  *ptx = NULL;
  if (!ir) return bg_error(BG_EINVAL, "llvm nvptx: no IR to compile");
  if (!bg_llvm_nvptx_knows(sm)) {
    char known[128];
    bg_llvm_nvptx_known(known, sizeof known);
    return bg_error(BG_EINVAL, "llvm %s: NVIDIA processor '%s' is unknown (expected one of: %s)", bg_llvm_version(),
                    sm ? sm : "(null)", known);
  }
  pthread_once(&g_init_once, init_nvptx);
  const bg_llvm_target t = {BG_NVPTX_TRIPLE, sm, bg_nvptx_features(sm), false, false, "PTX"};
  char *p = NULL;
  size_t n = 0;
  int rc = bg_llvm_emit(ir, &t, &p, &n);
  if (rc) return rc;
  if (!declares_target(p, sm)) {   /* LLVM fell back to its default processor */
    free(p);
    return bg_llvm_fail(BG_ENOTSUP, sm, "codegen", "the PTX does not declare .target for this processor");
  }
  *ptx = p;
  return 0;
}
