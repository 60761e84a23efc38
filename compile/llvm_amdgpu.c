/* compile/llvm_amdgpu.c: LLVM IR text -> AMDGPU relocatable code object through the LLVM-C API
 * (parse, verify, default<O3>, emit object: compile/llvm_emit.c), cached on disk. See llvm_amdgpu.h. */
#include "compile/llvm_amdgpu.h"

#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Target.h>

#include "baregpu/error.h"
#include "formats/amdgpu_elf.h"
#include "compile/kcache.h"
#include "compile/llvm_emit.h"
#include "compile/sha256.h"

#define KEY_VERSION "bg-amdgpu-1"   /* bump when the pipeline or the entry format changes */

/* gfx<major><minor><stepping>: major >= 10 is RDNA (wave32), 9 is GCN/CDNA (wave64). */
static int gfx_major(const char *mcpu) {
  if (!mcpu || strncmp(mcpu, "gfx", 3) != 0) return -1;
  size_t n = strlen(mcpu + 3);
  if (n < 3 || n > 4) return -1;
  for (size_t i = 0; i < n; i++)
    if (!isxdigit((unsigned char)mcpu[3 + i])) return -1;
  if (!isdigit((unsigned char)mcpu[3]) || (n == 4 && !isdigit((unsigned char)mcpu[4]))) return -1;
  return n == 4 ? (mcpu[3] - '0') * 10 + (mcpu[4] - '0') : mcpu[3] - '0';
}

const char *bg_amdgpu_features(const char *mcpu) {
  int major = gfx_major(mcpu);
  if (major < 0) return NULL;
  return major >= 10 ? "+wavefrontsize32" : "+wavefrontsize64";
}

unsigned bg_amdgpu_wave_size(const char *mcpu) {
  int major = gfx_major(mcpu);
  return major < 0 ? 0 : major >= 10 ? 32u : 64u;
}

static pthread_once_t g_init_once = PTHREAD_ONCE_INIT;
static void init_amdgpu(void) {
  LLVMInitializeAMDGPUTargetInfo();
  LLVMInitializeAMDGPUTarget();
  LLVMInitializeAMDGPUTargetMC();
  LLVMInitializeAMDGPUAsmPrinter();
  LLVMInitializeAMDGPUAsmParser(); /* inline asm in the IR is assembled by the object streamer; without it LLVM aborts */
}

/* The uncached compile (compile/llvm_emit.c: parse, verify, default<O3>, emit the object). */
static int compile_ir(const char *ir, const char *mcpu, const char *features, void **obj, size_t *size) {
  pthread_once(&g_init_once, init_amdgpu);
  const bg_llvm_target t = {BG_AMDGPU_TRIPLE, mcpu, features, true, true, "a code object"};
  char *out = NULL;
  int rc = bg_llvm_emit(ir, &t, &out, size);
  *obj = out;
  return rc;
}

/* e_flags of an ELF64 header: the EF_AMDGPU_MACH the object targets (0: none). */
static unsigned elf_mach(const void *obj, size_t n) {
  const unsigned char *p = obj;
  if (n < 64) return 0;
  return (unsigned)p[48] & 0xffu;   /* e_flags is at offset 48 in Elf64_Ehdr, MACH in its low byte */
}

int bg_llvm_amdgpu_compile(const char *ir, const char *mcpu, void **obj, size_t *size) {
  *obj = NULL;
  *size = 0;
  const char *features = bg_amdgpu_features(mcpu);
  if (!ir) return bg_error(BG_EINVAL, "llvm: no IR to compile");
  if (!features) return bg_error(BG_EINVAL, "llvm: mcpu '%s' is not an AMD GPU name (expected gfx<digits>, e.g. gfx1100)", mcpu ? mcpu : "(null)");
  bg_sha256_ctx h;
  uint8_t digest[32];
  char key[65], dir[4096], path[4200];
  bg_sha256_init(&h);
  const char *parts[] = {KEY_VERSION, bg_llvm_version(), mcpu, features, ir};
  for (size_t i = 0; i < sizeof parts / sizeof *parts; i++) bg_sha256_update(&h, parts[i], strlen(parts[i]) + 1);
  bg_sha256_final(&h, digest);
  bg_sha256_hex(digest, key);
  bool cache = bg_kcache_dir(dir, sizeof dir) == 0 && bg_kcache_path(dir, key, "co", path, sizeof path) == 0;
  bool hit = cache && bg_kcache_load(path, obj, size) == 1;
  int rc = hit ? 0 : compile_ir(ir, mcpu, features, obj, size);
  if (rc) return rc;
  unsigned want = bg_amdgpu_mach(mcpu), got = elf_mach(*obj, *size);
  if (got == 0 || (want && got != want)) {
    free(*obj);
    *obj = NULL;
    *size = 0;
    return bg_error(BG_ENOTSUP, "llvm %s does not know processor %s: the code object's EF_AMDGPU_MACH is 0x%x, expected 0x%x",
                    bg_llvm_version(), mcpu, got, want);
  }
  if (cache && !hit && bg_kcache_store(path, *obj, *size) != 0) BG_LOG(1, "llvm: %s (kernel not cached)", bg_last_error());
  return 0;
}

bool bg_llvm_amdgpu_knows(const char *mcpu) {
  static const char probe[] = "define amdgpu_kernel void @bg_probe() {\n  ret void\n}\n";
  if (!bg_amdgpu_features(mcpu) || !bg_amdgpu_mach(mcpu)) return false;
  void *obj = NULL;
  size_t n = 0;
  int rc = compile_ir(probe, mcpu, bg_amdgpu_features(mcpu), &obj, &n);
  bool ok = rc == 0 && elf_mach(obj, n) == bg_amdgpu_mach(mcpu);
  free(obj);
  return ok;
}
