/* compile/llvm_host.c: CPU kernels compiled in process: LLVM IR -> ELF relocatable object for the host CPU
 * (compile/llvm_emit.c's pipeline), cached on disk. See llvm_host.h. */
#include "compile/llvm_host.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Core.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>

#include "baregpu/error.h"
#include "compile/kcache.h"
#include "compile/llvm_emit.h"
#include "compile/sha256.h"

#define KEY_VERSION "bg-llvm-host-1"   /* bump when the pipeline or the entry format changes */

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static bg_llvm_host_target g_host;
static char *g_triple, *g_cpu, *g_features;
static int g_init_rc;

static void init_host(void) {
  /* LLVMInitializeNativeTarget covers the target, its MC layer and target info; the asm printer emits objects. */
  if (LLVMInitializeNativeTarget() || LLVMInitializeNativeAsmPrinter()) {
    g_init_rc = -BG_ENOTSUP;
    return;
  }
  g_triple = LLVMGetDefaultTargetTriple();
  g_cpu = LLVMGetHostCPUName();
  g_features = LLVMGetHostCPUFeatures();
  g_host.triple = g_triple ? g_triple : "";
  g_host.cpu = g_cpu ? g_cpu : "";
  g_host.features = g_features ? g_features : "";
}

const bg_llvm_host_target *bg_llvm_host(void) {
  pthread_once(&g_once, init_host);
  return g_init_rc ? NULL : &g_host;
}

int bg_llvm_host_compile(const char *ir, void **obj, size_t *size) {
  *obj = NULL;
  *size = 0;
  if (!ir) return bg_error(BG_EINVAL, "llvm host: no IR to compile");
  const bg_llvm_host_target *h = bg_llvm_host();
  if (!h) return bg_error(BG_ENOTSUP, "llvm %s: the native target (this machine's CPU) is not in the linked LLVM",
                          bg_llvm_version());
  bg_sha256_ctx sh;
  uint8_t digest[32];
  char key[65], dir[4096], path[4200];
  bg_sha256_init(&sh);
  const char *parts[] = {KEY_VERSION, bg_llvm_version(), h->triple, h->cpu, h->features, ir};
  for (size_t i = 0; i < sizeof parts / sizeof *parts; i++) bg_sha256_update(&sh, parts[i], strlen(parts[i]) + 1);
  bg_sha256_final(&sh, digest);
  bg_sha256_hex(digest, key);
  bool cache = bg_kcache_dir(dir, sizeof dir) == 0 && bg_kcache_path(dir, key, "o", path, sizeof path) == 0;
  if (cache && bg_kcache_load(path, obj, size) == 1) {
    BG_LOG(4, "llvm host: cache hit %s", path);
    return 0;
  }
  const bg_llvm_target t = {h->triple, h->cpu, h->features, true, true, "a host object"};
  char *out = NULL;
  int rc = bg_llvm_emit(ir, &t, &out, size);
  if (rc) return rc;
  *obj = out;
  if (cache && bg_kcache_store(path, *obj, *size) != 0) BG_LOG(1, "llvm host: %s (kernel not cached)", bg_last_error());
  return 0;
}
