/* compile/kernel.c: bg_kernel_render / bg_kernel_build, the pass pipeline of the kernel compiler
 * (the passes themselves are compile/k*.c, see kernel_internal.h). The renderer follows the
 * device's arch: "host" -> C (krender_c.c) -> bg_compile_c; "gfx*" -> LLVM IR (krender_llvm.c) ->
 * code object (llvm_amdgpu.c), checked against the render with the loader (formats/amdgpu_elf.c);
 * "sm_XY" -> LLVM IR (KLLVM_NVPTX) -> PTX text (llvm_nvptx.c), checked against the render and handed
 * to the NV backend as text (it makes the cubin: ptx_compile.h on NVK, the emulator's assembler on
 * MOCKNVK). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baregpu/compile.h"
#include "baregpu/error.h"
#include "bg_config.h"
#include "formats/amdgpu_elf.h"
#include "compile/kernel_internal.h"
#include "compile/klinear.h"
#include "compile/krender.h"
#include "compile/krender_llvm.h"
#if BG_HAVE_LLVM
#include "compile/llvm_amdgpu.h"
#include "compile/llvm_host.h"
#include "compile/llvm_nvptx.h"
#endif

enum renderer { RENDER_C, RENDER_AMDGPU, RENDER_LLVM_HOST, RENDER_NVPTX, RENDER_CPU_LLVM };

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

/* mcpu: the AMD processor (RENDER_AMDGPU), for the tensor-core form (ktc.h); NULL otherwise. */
static int render(ir_ctx *ctx, const ir_node *sink, const bg_kopts *opts, enum renderer which, const char *mcpu,
                  bg_kernel *k) {
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
  rc = which == RENDER_AMDGPU ? kopt_choose_amdgpu(ctx, s, &info, opts, mcpu, &applied) : kopt_choose(&info, opts, &applied);
  if (rc) return rc;
  if (!opts && which == RENDER_CPU_LLVM) kopt_host_heuristics(&info, &applied);
  if (!(s = kopt_apply(ctx, s, &info, &applied))) return pass_failed(ctx, "optimize");
  kopt_name(ctx, s, k->name, sizeof k->name);
  if (!(s = kexpand(ctx, s))) return bg_error_context(pass_failed(ctx, "expand"), "%s: ", k->name);
  if (!(s = kdecomp(ctx, s))) return bg_error_context(pass_failed(ctx, "decompose"), "%s: ", k->name);
  klin lin;
  rc = klinearize(ctx, s, &lin);
  for (int d = 0; d < 3; d++) k->gsz[d] = k->lsz[d] = 1;
  if (!rc && which == RENDER_C) {
    klin_plan_cpu_grid(&lin, k->gsz);   /* CPU kernels get a grid (the C renderer reads lin.grid_loop) */
    rc = krender_c(ctx, &info, &lin, k->name, &k->src, &k->flops);
  } else if (!rc) {
    enum kllvm_flavour f = which == RENDER_AMDGPU ? KLLVM_AMDGPU : which == RENDER_NVPTX ? KLLVM_NVPTX
                           : which == RENDER_CPU_LLVM ? KLLVM_HOST : KLLVM_HOST_TEST;
    rc = krender_llvm(ctx, &info, &lin, k->name, f, mcpu, &k->src, &k->flops, k->gsz, k->lsz);
  }
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
  k->opts = applied;
  BG_LOG(2, "kernel %s: %u buffers, %u vars, upcast %u %u %u %u unroll %u%s, %llu flops, gsz %u %u %u lsz %u %u %u", k->name,
         k->nbufs, k->nvars, applied.upcast[0], applied.upcast[1], applied.upcast[2], applied.upcast[3], applied.unroll,
         applied.no_opt ? " (no_opt)" : "", (unsigned long long)k->flops, k->gsz[0], k->gsz[1], k->gsz[2], k->lsz[0],
         k->lsz[1], k->lsz[2]);
  BG_LOG(4, "kernel %s source:\n%s", k->name, k->src);
  return 0;
}

int bg_kernel_render(ir_ctx *ctx, const ir_node *sink, const bg_kopts *opts, bg_kernel *k) {
  return render(ctx, sink, opts, RENDER_C, NULL, k);
}

int bg_kernel_render_amdgpu(ir_ctx *ctx, const ir_node *sink, const bg_kopts *opts, bg_kernel *k) {
  return render(ctx, sink, opts, RENDER_AMDGPU, "gfx1100", k);
}

int bg_kernel_render_amdgpu_for(ir_ctx *ctx, const ir_node *sink, const bg_kopts *opts, const char *mcpu, bg_kernel *k) {
  return render(ctx, sink, opts, RENDER_AMDGPU, mcpu, k);
}

int bg_kernel_render_nvptx(ir_ctx *ctx, const ir_node *sink, const bg_kopts *opts, bg_kernel *k) {
  return render(ctx, sink, opts, RENDER_NVPTX, NULL, k);
}

int bg_kernel_render_llvm_host(ir_ctx *ctx, const ir_node *sink, const bg_kopts *opts, bg_kernel *k) {
  return render(ctx, sink, opts, RENDER_LLVM_HOST, NULL, k);
}

int bg_kernel_render_cpu_llvm(ir_ctx *ctx, const ir_node *sink, const bg_kopts *opts, bg_kernel *k) {
  return render(ctx, sink, opts, RENDER_CPU_LLVM, NULL, k);
}

/* Free k, keeping its name for the message: "kernel NAME (cpu): " (cpu NULL: "kernel NAME: ") before rc's. */
static int kernel_failed(bg_kernel *k, const char *cpu, int rc) {
  char name[sizeof k->name];
  memcpy(name, k->name, sizeof name);
  bg_kernel_free(k);
  return cpu ? bg_error_context(rc, "kernel %s (%s): ", name, cpu) : bg_error_context(rc, "kernel %s: ", name);
}

#if !BG_HAVE_LLVM
/* A GPU kernel in a build without LLVM: what to install. */
static int no_llvm(bg_kernel *k, const char *cpu, const char *what) {
  if (k) memset(k, 0, sizeof *k);
  return bg_error(BG_ENOTSUP, "kernel: %s needs LLVM 22 or 19 for %s code generation, but baregpu was built without "
                  "LLVM: install llvm-22-dev (or llvm-19-dev) and reconfigure", cpu, what);
}
#endif

/* Bytes of the kernarg segment the renderer's arguments take (C-like layout, each aligned to its size). */
static uint32_t kernarg_bytes(const bg_kernel *k) {
  uint32_t off = 0;
  for (unsigned i = 0; i < k->nbufs + k->nvars; i++) {
    uint32_t sz = k->arg_sizes[i];
    off = (off + sz - 1) / sz * sz + sz;
  }
  return off;
}

/* The code object must be the kernel that was rendered: same name, processor, kernarg size and
 * work-group size, else the dispatch would pass wrong arguments or launch an illegal group. */
static int check_code_object(const bg_kernel *k, const char *mcpu, const void *elf, size_t n) {
  bg_amdgpu_image img;
  int rc = bg_amdgpu_elf_load(elf, n, k->name, &img);
  if (rc) return rc;
  uint32_t args = kernarg_bytes(k), threads = k->lsz[0] * k->lsz[1] * k->lsz[2];
  if (strcmp(img.mcpu, mcpu))
    rc = bg_error(BG_ECOMPILE, "code object targets %s, the kernel was compiled for %s", img.mcpu, mcpu);
  else if (img.kernarg_segment_size != args || img.kd.kernarg_size != args)
    rc = bg_error(BG_ECOMPILE, "code object kernarg size %u (descriptor %u) differs from the renderer's %u argument bytes "
                  "(%u buffers, %u variables)", img.kernarg_segment_size, img.kd.kernarg_size, args, k->nbufs, k->nvars);
  else if (img.max_flat_workgroup_size != threads)
    rc = bg_error(BG_ECOMPILE, "code object max flat work-group size %u differs from the renderer's lsz %u x %u x %u = %u",
                  img.max_flat_workgroup_size, k->lsz[0], k->lsz[1], k->lsz[2], threads);
  else if (img.kd.private_segment_fixed_size)
    BG_LOG(2, "kernel %s: %u bytes of scratch per work-item", k->name, img.kd.private_segment_fixed_size);
  bg_amdgpu_image_free(&img);
  return rc;
}

int bg_kernel_compile_amdgpu(ir_ctx *ctx, const ir_node *sink, const bg_kopts *opts, const char *mcpu, bg_kernel *k,
                             void **elf, size_t *n) {
  if (!elf || !n) return bg_error(BG_EINVAL, "kernel: no code object output");
  *elf = NULL;
  *n = 0;
  if (!mcpu || strncmp(mcpu, "gfx", 3) != 0)
    return bg_error(BG_EINVAL, "kernel: mcpu '%s' is not an AMD GPU (expected gfx<digits>)", mcpu ? mcpu : "(null)");
#if BG_HAVE_LLVM
  int rc = bg_kernel_render_amdgpu_for(ctx, sink, opts, mcpu, k);
  if (rc) return rc;
  if (!(rc = bg_llvm_amdgpu_compile(k->src, mcpu, elf, n)) && !(rc = check_code_object(k, mcpu, *elf, *n))) return 0;
  free(*elf);
  *elf = NULL;
  *n = 0;
  return kernel_failed(k, mcpu, rc);
#else
  (void)ctx;
  (void)sink;
  (void)opts;
  (void)check_code_object;
  return no_llvm(k, mcpu, "AMD");
#endif
}

/* The PTX must be the kernel that was rendered: an entry named like it (not a .func: only an entry
 * gets a cubin's .text.NAME and .nv.info.NAME), one .param per argument and .reqntid = lsz, else
 * the backend would look for another symbol or launch with wrong parameters. */
static int check_ptx(const bg_kernel *k, const char *sm, const char *ptx) {
  char want[96];
  snprintf(want, sizeof want, ".entry %s(", k->name);
  const char *e = strstr(ptx, want);
  if (!e || (e > ptx && e[-1] != ' ' && e[-1] != '\n'))
    return bg_error(BG_ECOMPILE, "the PTX for %s has no '%s': the kernel is not an entry", sm, want);
  const char *close = strchr(e, ')');
  unsigned nparams = 0;
  for (const char *p = strstr(e, ".param "); p && close && p < close; p = strstr(p + 1, ".param ")) nparams++;
  if (!close || nparams != k->nbufs + k->nvars)
    return bg_error(BG_ECOMPILE, "the PTX entry %s declares %u .param, the render has %u arguments (%u buffers, %u variables)",
                    k->name, nparams, k->nbufs + k->nvars, k->nbufs, k->nvars);
  snprintf(want, sizeof want, ".reqntid %u, %u, %u", k->lsz[0], k->lsz[1], k->lsz[2]);
  const char *body = strchr(close, '{');
  const char *req = strstr(close, ".reqntid");
  if (!req || (body && req > body) || strncmp(req, want, strlen(want)))
    return bg_error(BG_ECOMPILE, "the PTX entry %s lacks '%s' (the renderer's work-group size)", k->name, want);
  return 0;
}

int bg_kernel_compile_nvptx(ir_ctx *ctx, const ir_node *sink, const bg_kopts *opts, const char *sm, bg_kernel *k,
                            char **ptx) {
  if (!ptx) return bg_error(BG_EINVAL, "kernel: no PTX output");
  *ptx = NULL;
  if (!sm || strncmp(sm, "sm_", 3) != 0)
    return bg_error(BG_EINVAL, "kernel: processor '%s' is not an NVIDIA GPU (expected sm_<digits>)", sm ? sm : "(null)");
#if BG_HAVE_LLVM
  int rc = bg_kernel_render_nvptx(ctx, sink, opts, k);
  if (rc) return rc;
  if (!(rc = bg_llvm_nvptx_compile(k->src, sm, ptx)) && !(rc = check_ptx(k, sm, *ptx))) return 0;
  free(*ptx);
  *ptx = NULL;
  return kernel_failed(k, sm, rc);
#else
  (void)ctx;
  (void)sink;
  (void)opts;
  (void)check_ptx;
  return no_llvm(k, sm, "NVPTX");
#endif
}

int bg_kernel_compile_host(ir_ctx *ctx, const ir_node *sink, const bg_kopts *opts, bg_kernel *k, void **obj, size_t *n) {
  if (!obj || !n) return bg_error(BG_EINVAL, "kernel: no object output");
  *obj = NULL;
  *n = 0;
#if BG_HAVE_LLVM
  int rc = bg_kernel_render_cpu_llvm(ctx, sink, opts, k);
  if (rc) return rc;
  if (!(rc = bg_llvm_host_compile(k->src, obj, n))) return 0;
  return kernel_failed(k, "host", rc);
#else
  (void)ctx;
  (void)sink;
  (void)opts;
  return no_llvm(k, "host", "in-process CPU");
#endif
}

/* BG_CPU_COMPILER: "llvm" (the default with LLVM: in process, compile/llvm_host.h) or "c" (the C renderer and
 * the system C compiler, compile/hostcc.c; the only one without LLVM). 1 for LLVM, 0 for C, or -BG_EINVAL. */
static int cpu_compiler_llvm(void) {
  const char *v = getenv("BG_CPU_COMPILER");
  if (!v || !*v) return BG_HAVE_LLVM ? 1 : 0;
  if (!strcmp(v, "c")) return 0;
  if (!strcmp(v, "llvm")) {
    if (BG_HAVE_LLVM) return 1;
    return bg_error(BG_ENOTSUP, "kernel: BG_CPU_COMPILER=llvm, but baregpu was built without LLVM: install llvm-22-dev "
                    "(or llvm-19-dev) and reconfigure, or set BG_CPU_COMPILER=c");
  }
  return bg_error(BG_EINVAL, "kernel: BG_CPU_COMPILER='%.40s' is not a CPU kernel compiler (expected 'llvm' or 'c')", v);
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
  const char *arch = bg_dev_arch(d);
  int rc;
  void *so = NULL;
  size_t size = 0;
  if (!strncmp(arch, "gfx", 3)) {
    if ((rc = bg_kernel_compile_amdgpu(ctx, sink, opts, arch, k, &so, &size)))
      return bg_error_context(rc, "device %s: ", bg_dev_name(d));
  } else if (!strcmp(arch, "host")) {
    int llvm = cpu_compiler_llvm();
    if (llvm < 0) {
      memset(k, 0, sizeof *k);
      return llvm;
    }
    if (llvm) {
      if ((rc = bg_kernel_compile_host(ctx, sink, opts, k, &so, &size))) return rc;
    } else {
      if ((rc = bg_kernel_render(ctx, sink, opts, k))) return rc;
      if ((rc = bg_compile_c(k->src, getenv("BG_KERNEL_CFLAGS"), &so, &size))) return kernel_failed(k, NULL, rc);
    }
  } else if (!strncmp(arch, "sm_", 3)) {
    /* PTX text, NUL included: the NV backend compiles it to a cubin for the device (nv/nv_prog.c). */
    char *ptx = NULL;
    if ((rc = bg_kernel_compile_nvptx(ctx, sink, opts, arch, k, &ptx)))
      return bg_error_context(rc, "device %s: ", bg_dev_name(d));
    so = ptx;
    size = strlen(ptx) + 1;
  } else {
    return bg_error(BG_ENOTSUP, "kernel: device %s (arch %s): no kernel renderer (host: C, gfx*: AMDGPU LLVM IR, "
                    "sm_*: NVPTX)", bg_dev_name(d), arch);
  }
  bg_program_info info = {k->name, k->nbufs + k->nvars, k->arg_sizes};
  rc = bg_program_load(d, so, size, &info, prg);
  free(so);
  return rc ? kernel_failed(k, NULL, rc) : 0;
}
