/* compile/llvm_amdgpu.h: LLVM IR text -> AMDGPU code object (ELF64 ET_REL) through the LLVM-C API.
 * Built only when BG_HAVE_LLVM (llvm-config-22 or -19 found by meson). Private to compile/.
 *
 * One LLVMContext per call, so concurrent compiles need no lock; the AMDGPU target is initialised
 * once per process. Results are cached on disk (compile/kcache.h) under SHA-256 of (format version,
 * IR, mcpu, target features, LLVM version): a compiler upgrade misses. */
#ifndef BG_COMPILE_LLVM_AMDGPU_H
#define BG_COMPILE_LLVM_AMDGPU_H

#include <stdbool.h>
#include <stddef.h>

#include "compile/llvm_emit.h"

#define BG_AMDGPU_TRIPLE "amdgcn-amd-amdhsa"

/* The target features baregpu compiles mcpu with: "+wavefrontsize32" for gfx10+ (RDNA),
 * "+wavefrontsize64" for gfx9 (CDNA). NULL for a name that is not "gfx<digits>". */
const char *bg_amdgpu_features(const char *mcpu);
/* Wave size the features above select (32 or 64; 0 for an unknown name). */
unsigned bg_amdgpu_wave_size(const char *mcpu);

/* bg_llvm_version ("22.1.8": the LLVM linked in) is compile/llvm_emit.h's. */

/* Compile IR text (NUL-terminated) for mcpu with default<O3>; *obj (malloc'd) holds the relocatable
 * code object. Errors: -BG_ECOMPILE with LLVM's message (parse, verify, pass or codegen diagnostic),
 * -BG_ENOTSUP when this LLVM does not know mcpu (the object would target no processor). */
int bg_llvm_amdgpu_compile(const char *ir, const char *mcpu, void **obj, size_t *size);

/* Does the linked LLVM generate code for mcpu? (compiles a one-instruction kernel once per name) */
bool bg_llvm_amdgpu_knows(const char *mcpu);

#endif
