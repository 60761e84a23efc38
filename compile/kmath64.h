/* compile/kmath64.h: float64 exp2/log2/sin as LLVM IR functions (compile/kmath64.c) for the AMDGPU
 * flavour of krender_llvm.c, whose backend cannot lower llvm.exp2/log2/sin.f64. Private to compile/. */
#ifndef BG_COMPILE_KMATH64_H
#define BG_COMPILE_KMATH64_H

#include <stdbool.h>

#include "compile/kernel_internal.h"

enum { KM64_EXP2, KM64_LOG2, KM64_SIN, KM64_COUNT };

/* "bg_exp2_f64", "bg_log2_f64", "bg_sin_f64" for KM64_*; NULL otherwise. */
const char *kmath64_name(unsigned which);
/* Appends the definitions of the functions in mask (bits 1 << KM64_*) and the declarations of the
 * intrinsics they call; llvm.fma.f64 is declared unless fma_declared (the module has it already). */
void kmath64_emit(kstr *s, unsigned mask, bool fma_declared);

#endif
