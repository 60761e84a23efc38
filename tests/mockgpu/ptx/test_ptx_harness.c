/* tests/mockgpu/ptx/test_ptx_harness.c: see test_ptx_harness.h. */
#include "test_ptx_harness.h"

#include <llvm-c/Core.h>
#include <llvm-c/IRReader.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint8_t arena[ARENA_SIZE];
uint64_t test_max_insts = 50000000;

static int arena_read(void *ctx, uint64_t a, void *dst, size_t n) {
  (void)ctx;
  if (a < ARENA_BASE || a - ARENA_BASE > ARENA_SIZE - n) return -1;
  memcpy(dst, arena + (a - ARENA_BASE), n);
  return 0;
}
static int arena_write(void *ctx, uint64_t a, const void *src, size_t n) {
  (void)ctx;
  if (a < ARENA_BASE || a - ARENA_BASE > ARENA_SIZE - n) return -1;
  memcpy(arena + (a - ARENA_BASE), src, n);
  return 0;
}

char *ir_to_ptx(const char *ir, const char *cpu) {
  bool o3 = strstr(cpu, "+O3") != NULL;
  char cpu_name[16];
  snprintf(cpu_name, sizeof cpu_name, "%.5s", cpu); /* "sm_90" or "sm_90+O3" */
  LLVMInitializeNVPTXTargetInfo();
  LLVMInitializeNVPTXTarget();
  LLVMInitializeNVPTXTargetMC();
  LLVMInitializeNVPTXAsmPrinter();
  LLVMContextRef ctx = LLVMContextCreate();
  LLVMMemoryBufferRef mb = LLVMCreateMemoryBufferWithMemoryRangeCopy(ir, strlen(ir), "kernel.ll");
  LLVMModuleRef mod = NULL;
  char *msg = NULL, *out = NULL;
  LLVMTargetRef target;
  if (LLVMParseIRInContext(ctx, mb, &mod, &msg)) { fprintf(stderr, "IR: %s\n", msg); goto done; }
  if (LLVMGetTargetFromTriple("nvptx64-nvidia-cuda", &target, &msg)) { fprintf(stderr, "target: %s\n", msg); goto done; }
  LLVMTargetMachineRef tm = LLVMCreateTargetMachine(target, "nvptx64-nvidia-cuda", cpu_name, "", LLVMCodeGenLevelDefault,
                                                    LLVMRelocDefault, LLVMCodeModelDefault);
  if (o3) {
    LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
    LLVMErrorRef e = LLVMRunPasses(mod, "default<O3>", tm, po);
    LLVMDisposePassBuilderOptions(po);
    if (e) {
      char *em = LLVMGetErrorMessage(e);
      fprintf(stderr, "passes: %s\n", em);
      LLVMDisposeErrorMessage(em);
      LLVMDisposeTargetMachine(tm);
      goto done;
    }
  }
  LLVMMemoryBufferRef ob;
  if (LLVMTargetMachineEmitToMemoryBuffer(tm, mod, LLVMAssemblyFile, &msg, &ob)) {
    fprintf(stderr, "llc: %s\n", msg);
  } else {
    size_t n = LLVMGetBufferSize(ob);
    out = malloc(n + 1);
    memcpy(out, LLVMGetBufferStart(ob), n);
    out[n] = 0;
    LLVMDisposeMemoryBuffer(ob);
  }
  LLVMDisposeTargetMachine(tm);
done:
  if (msg) LLVMDisposeMessage(msg);
  if (mod) LLVMDisposeModule(mod);
  LLVMContextDispose(ctx);
  return out;
}

int run_ptx(const char *ptx, uint32_t grid, uint32_t block, const uint64_t *args, unsigned nargs, ptx_report *rep) {
  ptx_module *m;
  char err[512];
  if (ptx_parse(ptx, &m, err, sizeof err)) {
    snprintf(rep->msg, sizeof rep->msg, "%s", err);
    return -2;
  }
  uint8_t params[256] = {0};
  size_t end = 0;
  for (unsigned i = 0; i < nargs; i++) {
    size_t off, size;
    ck_assert_msg(ptx_param_layout(m, NULL, i, &off, &size) == 0, "param %u missing", i);
    memcpy(params + off, &args[i], size);
    end = off + size;
  }
  ck_assert_msg(ptx_param_layout(m, NULL, nargs, &(size_t){0}, &(size_t){0}) != 0, "kernel has more params than %u", nargs);
  ptx_launch l = {.grid = {grid, 1, 1}, .block = {block, 1, 1}, .params = params, .params_size = end,
                  .mem = {.read = arena_read, .write = arena_write}, .max_insts = test_max_insts};
  int rc = ptx_run(m, &l, rep);
  ptx_free(m);
  return rc;
}

int run_ir(const char *ir, uint32_t grid, uint32_t block, const uint64_t *args, unsigned nargs, ptx_report *rep,
           const char *cpu) {
  char *ptx = ir_to_ptx(ir, cpu);
  ck_assert_msg(ptx != NULL, "LLVM NVPTX did not compile the kernel");
  int rc = run_ptx(ptx, grid, block, args, nargs, rep);
  if (getenv("PTX_TEST_DUMP")) fprintf(stderr, "%s\n", ptx); /* the PTX LLVM emitted, for debugging */
  if (rc) fprintf(stderr, "%s\n----\n%s\n", rep->msg, ptx);
  free(ptx);
  return rc;
}

int main(void) {
  Suite *s = suite_create("ptx-interp");
  suite_add_tcase(s, kernel_tests());
  suite_add_tcase(s, strict_tests());
  suite_add_tcase(s, more_tests());
  suite_add_tcase(s, ops_tests());
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
