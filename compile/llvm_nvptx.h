/* compile/llvm_nvptx.h: LLVM IR text (krender_llvm.c, KLLVM_NVPTX) -> PTX text through the LLVM-C API.
 * Built only when BG_HAVE_LLVM. Private to compile/. The PTX goes on to a cubin elsewhere (ptxas,
 * nvJitLink); this file only makes the text.
 *
 * One LLVMContext per call, so concurrent compiles need no lock; the NVPTX target is initialised
 * once per process. */
#ifndef BG_COMPILE_LLVM_NVPTX_H
#define BG_COMPILE_LLVM_NVPTX_H

#include <stdbool.h>
#include <stddef.h>

#define BG_NVPTX_TRIPLE "nvptx64-nvidia-cuda"

/* The PTX ISA feature baregpu compiles sm with ("+ptx78" for sm_90: the first PTX ISA version
 * that has the target), or NULL when sm is not one of sm_80, 86, 89, 90, 100, 120. */
const char *bg_nvptx_features(const char *sm);

/* Does the linked LLVM generate PTX for sm (a name above, and a new enough LLVM: sm_100 and sm_120
 * need LLVM 20)? */
bool bg_llvm_nvptx_knows(const char *sm);

/* The names bg_llvm_nvptx_knows accepts, space separated, into buf ("sm_80 sm_86 ..."). */
void bg_llvm_nvptx_known(char *buf, size_t n);

/* Compile IR text (NUL-terminated) for sm with default<O3>; *ptx (malloc'd, NUL-terminated) is the
 * PTX module, which declares `.target sm`. Errors: -BG_EINVAL for a name this LLVM does not know
 * (naming it and the known ones), -BG_ECOMPILE with LLVM's message (parse, verify, pass or codegen
 * diagnostic). */
int bg_llvm_nvptx_compile(const char *ir, const char *sm, char **ptx);

#endif
