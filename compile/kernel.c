/* compile/kernel.c: bg_kernel_render / bg_kernel_build, the pass pipeline of the kernel compiler
 * (the passes themselves are compile/k*.c, see kernel_internal.h). */
#include <stdlib.h>
#include <string.h>

#include "baregpu/compile.h"
#include "baregpu/error.h"
#include "compile/kernel_internal.h"
#include "compile/klinear.h"
#include "compile/krender.h"

int bg_kernel_verify(ir_ctx *ctx, const ir_node *sink) {
  kinfo info;
  if (!ctx) return bg_error(BG_EINVAL, "kernel: no ir context");
  return kverify(ctx, sink, &info);
}

static int pass_failed(ir_ctx *ctx, const char *pass) {
  const char *m = bg_last_error();
  if (m && strncmp(m, "kernel", 6) == 0) return -BG_EINVAL;   /* the pass said why */
  return bg_error(BG_EINVAL, "kernel: %s: %s", pass, ir_error(ctx));
}

int bg_kernel_render(ir_ctx *ctx, const ir_node *sink, const bg_kopts *opts, bg_kernel *k) {
  if (!k) return bg_error(BG_EINVAL, "kernel: no output kernel");
  memset(k, 0, sizeof *k);
  if (!ctx) return bg_error(BG_EINVAL, "kernel: no ir context");
  kinfo info;
  bg_kopts applied;
  int rc = kverify(ctx, sink, &info);
  if (rc) return rc;
  bg_clear_error();
  const ir_node *s = ksimplify(ctx, sink);
  if (!s) return pass_failed(ctx, "simplify");
  if ((rc = kopt_choose(&info, opts, &applied))) return rc;
  if (!(s = kopt_apply(ctx, s, &info, &applied))) return pass_failed(ctx, "optimize");
  kopt_name(ctx, s, k->name, sizeof k->name);
  if (!(s = kexpand(ctx, s))) return bg_error_context(pass_failed(ctx, "expand"), "%s: ", k->name);
  if (!(s = kdecomp(ctx, s))) return bg_error_context(pass_failed(ctx, "decompose"), "%s: ", k->name);
  klin lin;
  rc = klinearize(ctx, s, &lin);
  if (!rc) rc = krender_c(ctx, &info, &lin, k->name, &k->src, &k->flops);
  klin_free(&lin);
  if (rc) {
    char name[sizeof k->name];
    memcpy(name, k->name, sizeof name);
    bg_kernel_free(k);
    return bg_error_context(rc, "%s: ", name);
  }
  k->nbufs = info.nbufs;
  k->nvars = info.nvars;
  for (unsigned i = 0; i < info.nbufs; i++) k->arg_sizes[i] = 8;
  for (unsigned i = 0; i < info.nvars; i++) {
    k->vars[i] = info.vars[i];
    k->arg_sizes[info.nbufs + i] = 4;
  }
  for (int d = 0; d < 3; d++) k->gsz[d] = k->lsz[d] = 1;
  k->opts = applied;
  BG_LOG(2, "kernel %s: %u buffers, %u vars, upcast %u %u %u %u unroll %u%s, %llu flops", k->name, k->nbufs, k->nvars,
         applied.upcast[0], applied.upcast[1], applied.upcast[2], applied.upcast[3], applied.unroll,
         applied.no_opt ? " (no_opt)" : "", (unsigned long long)k->flops);
  BG_LOG(4, "kernel %s source:\n%s", k->name, k->src);
  return 0;
}

void bg_kernel_free(bg_kernel *k) {
  if (!k) return;
  free(k->src);
  memset(k, 0, sizeof *k);
}

int bg_kernel_build(bg_dev *d, ir_ctx *ctx, const ir_node *sink, const bg_kopts *opts, bg_kernel *k, bg_program **prg) {
  if (!prg) return bg_error(BG_EINVAL, "kernel: no program output");
  *prg = NULL;
  if (!d) return bg_error(BG_EINVAL, "kernel: no device");
  if (strcmp(bg_dev_arch(d), "host") != 0)
    return bg_error(BG_ENOTSUP, "kernel: device %s (arch %s): only the CPU device has a kernel renderer", bg_dev_name(d),
                    bg_dev_arch(d));
  int rc = bg_kernel_render(ctx, sink, opts, k);
  if (rc) return rc;
  void *so = NULL;
  size_t size = 0;
  if ((rc = bg_compile_c(k->src, getenv("BG_KERNEL_CFLAGS"), &so, &size))) {
    char name[sizeof k->name];
    memcpy(name, k->name, sizeof name);
    bg_kernel_free(k);
    return bg_error_context(rc, "kernel %s: ", name);
  }
  bg_program_info info = {k->name, k->nbufs + k->nvars, k->arg_sizes};
  rc = bg_program_load(d, so, size, &info, prg);
  free(so);
  if (rc) {
    char name[sizeof k->name];
    memcpy(name, k->name, sizeof name);
    bg_kernel_free(k);
    return bg_error_context(rc, "kernel %s: ", name);
  }
  return 0;
}
