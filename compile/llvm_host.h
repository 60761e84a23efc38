/* compile/llvm_host.h: LLVM IR text (krender_llvm.c, KLLVM_HOST flavour) -> an ELF relocatable object for this
 * machine through the LLVM-C API, for the CPU device's object loader (formats/host_obj.h). Built only when
 * BG_HAVE_LLVM. Private to compile/.
 *
 * The target is the host: LLVMGetDefaultTargetTriple, LLVMGetHostCPUName and LLVMGetHostCPUFeatures (so the
 * widest vectors and FMA the CPU has), reloc model PIC, small code model, default<O3> (compile/llvm_emit.c);
 * the native target is initialised once per process, each compile has its own LLVMContext (thread safe).
 * Results are cached on disk (compile/kcache.h) as <key>.o, key = SHA-256 of (format version, LLVM version,
 * triple, CPU name, features, IR): another machine or another LLVM misses. */
#ifndef BG_COMPILE_LLVM_HOST_H
#define BG_COMPILE_LLVM_HOST_H

#include <stddef.h>

/* The host target LLVM compiles CPU kernels for (strings owned by this module, valid for the process). */
typedef struct bg_llvm_host_target {
  const char *triple, *cpu, *features;
} bg_llvm_host_target;
const bg_llvm_host_target *bg_llvm_host(void);

/* Compile IR text (NUL-terminated); *obj (malloc'd) holds the ELF ET_REL object, through the kernel cache.
 * Errors: -BG_ECOMPILE with LLVM's message (parse, verify, passes, codegen), -BG_EINVAL for no IR. */
int bg_llvm_host_compile(const char *ir, void **obj, size_t *size);

#endif
