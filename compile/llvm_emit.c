/* compile/llvm_emit.c: see llvm_emit.h. */
#include "compile/llvm_emit.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Analysis.h>
#include <llvm-c/Core.h>
#include <llvm-c/Error.h>
#include <llvm-c/IRReader.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include "baregpu/error.h"

enum { DIAG_MAX = 1600 };

static char g_version[32];
static pthread_once_t g_version_once = PTHREAD_ONCE_INIT;
static void fill_version(void) {
  unsigned major = 0, minor = 0, patch = 0;
  LLVMGetVersion(&major, &minor, &patch);
  snprintf(g_version, sizeof g_version, "%u.%u.%u", major, minor, patch);
}

const char *bg_llvm_version(void) {
  pthread_once(&g_version_once, fill_version);
  return g_version;
}

int bg_llvm_fail(int code, const char *cpu, const char *stage, const char *msg) {
  return bg_error(code, "llvm %s (%s): %s: %.*s", bg_llvm_version(), cpu, stage, DIAG_MAX, msg ? msg : "(no message)");
}

/* LLVM reports codegen errors (unsupported libcalls, resource limits) through the context's diagnostic handler. */
typedef struct diag {
  char text[DIAG_MAX];
  size_t len;
  int errors;
} diag;

static void on_diagnostic(LLVMDiagnosticInfoRef di, void *opaque) {
  diag *d = opaque;
  if (LLVMGetDiagInfoSeverity(di) != LLVMDSError) return;
  d->errors++;
  char *m = LLVMGetDiagInfoDescription(di);
  if (m && d->len + 3 < sizeof d->text) {
    int w = snprintf(d->text + d->len, sizeof d->text - d->len, "%s%s", d->len ? "; " : "", m);
    if (w > 0) d->len += (size_t)w < sizeof d->text - d->len ? (size_t)w : sizeof d->text - d->len - 1;
  }
  LLVMDisposeMessage(m);
}

int bg_llvm_emit(const char *ir, const bg_llvm_target *t, char **out, size_t *n) {
  *out = NULL;
  *n = 0;
  char *err = NULL;
  LLVMTargetRef target;
  if (LLVMGetTargetFromTriple(t->triple, &target, &err)) {
    char stage[96];
    snprintf(stage, sizeof stage, "no target %s", t->triple);
    int rc = bg_llvm_fail(BG_ENOTSUP, t->cpu, stage, err);
    LLVMDisposeMessage(err);
    return rc;
  }
  LLVMContextRef ctx = LLVMContextCreate();
  diag d = {.len = 0};
  LLVMContextSetDiagnosticHandler(ctx, on_diagnostic, &d);
  LLVMMemoryBufferRef buf = LLVMCreateMemoryBufferWithMemoryRangeCopy(ir, strlen(ir), "kernel.ll");
  LLVMModuleRef mod = NULL;
  LLVMTargetMachineRef tm = NULL;
  LLVMMemoryBufferRef mb = NULL;
  int rc = 0;
  if (LLVMParseIRInContext(ctx, buf, &mod, &err)) {   /* takes buf in every case */
    rc = bg_llvm_fail(BG_ECOMPILE, t->cpu, "parse", err);
    goto done;
  }
  if (LLVMVerifyModule(mod, LLVMReturnStatusAction, &err)) {
    rc = bg_llvm_fail(BG_ECOMPILE, t->cpu, "verify", err);
    goto done;
  }
  LLVMDisposeMessage(err);
  err = NULL;
  tm = LLVMCreateTargetMachine(target, t->triple, t->cpu, t->features, LLVMCodeGenLevelAggressive,
                               t->pic ? LLVMRelocPIC : LLVMRelocDefault, LLVMCodeModelDefault);
  if (!tm) {
    rc = bg_llvm_fail(BG_ECOMPILE, t->cpu, "target machine", "LLVMCreateTargetMachine returned NULL");
    goto done;
  }
  LLVMSetTarget(mod, t->triple);
  LLVMTargetDataRef dl = LLVMCreateTargetDataLayout(tm);
  LLVMSetModuleDataLayout(mod, dl);
  LLVMDisposeTargetData(dl);
  LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
  LLVMErrorRef e = LLVMRunPasses(mod, "default<O3>", tm, po);
  LLVMDisposePassBuilderOptions(po);
  if (e) {
    char *m = LLVMGetErrorMessage(e);
    rc = bg_llvm_fail(BG_ECOMPILE, t->cpu, "passes", m);
    LLVMDisposeErrorMessage(m);
    goto done;
  }
  if (LLVMTargetMachineEmitToMemoryBuffer(tm, mod, t->object ? LLVMObjectFile : LLVMAssemblyFile, &err, &mb)) {
    rc = bg_llvm_fail(BG_ECOMPILE, t->cpu, "codegen", err);
    goto done;
  }
  if (d.errors) {
    rc = bg_llvm_fail(BG_ECOMPILE, t->cpu, "codegen", d.text);
    goto done;
  }
  size_t len = LLVMGetBufferSize(mb);
  char *p = malloc(len + 1);
  if (!p) {
    rc = bg_error(BG_ENOMEM, "llvm: out of memory copying %zu bytes of %s", len, t->what);
    goto done;
  }
  memcpy(p, LLVMGetBufferStart(mb), len);
  p[len] = 0;
  *out = p;
  *n = len;
done:
  if (err) LLVMDisposeMessage(err);
  if (mb) LLVMDisposeMemoryBuffer(mb);
  if (tm) LLVMDisposeTargetMachine(tm);
  if (mod) LLVMDisposeModule(mod);
  LLVMContextDispose(ctx);
  return rc;
}
