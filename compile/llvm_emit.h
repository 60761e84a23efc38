/* compile/llvm_emit.h: the LLVM-C pipeline the GPU code generators share (llvm_amdgpu.c, llvm_nvptx.c): parse the
 * IR text, verify it, run default<O3> for the target machine, emit an object file or assembly text. Built only when
 * BG_HAVE_LLVM. Private to compile/.
 *
 * One LLVMContext per call, so concurrent compiles need no lock; the caller initialises its target once per process
 * (LLVMInitialize<Target>*) before the first call. Codegen errors are collected through the context's diagnostic
 * handler (without one LLVM ends the process). */
#ifndef BG_COMPILE_LLVM_EMIT_H
#define BG_COMPILE_LLVM_EMIT_H

#include <stdbool.h>
#include <stddef.h>

typedef struct bg_llvm_target {
  const char *triple;     /* "amdgcn-amd-amdhsa", "nvptx64-nvidia-cuda" */
  const char *cpu;        /* "gfx1100", "sm_90" */
  const char *features;   /* "+wavefrontsize32", "+ptx78" */
  bool pic;               /* LLVMRelocPIC, else LLVMRelocDefault */
  bool object;            /* an object file, else assembly text */
  const char *what;       /* what the output is, for messages: "code object", "PTX" */
} bg_llvm_target;

/* "22.1.8": the LLVM linked in. */
const char *bg_llvm_version(void);

/* Compile ir (NUL-terminated) for t. *out (malloc'd) holds *n bytes and a NUL after them. Errors: -BG_ENOTSUP when
 * LLVM has no such target, -BG_ECOMPILE with LLVM's message (stages: parse, verify, target machine, passes,
 * codegen), both "llvm VERSION (CPU): STAGE: message". */
int bg_llvm_emit(const char *ir, const bg_llvm_target *t, char **out, size_t *n);

/* The same error format, for the callers' own checks of the output. */
int bg_llvm_fail(int code, const char *cpu, const char *stage, const char *msg);

#endif
