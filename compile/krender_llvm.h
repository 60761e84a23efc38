/* compile/krender_llvm.h: the LLVM IR renderer of linearized kernels for AMD GPUs (amdgcn-amd-amdhsa)
 * and NVIDIA GPUs (nvptx64-nvidia-cuda). Private to compile/. The IR is independent of the processor
 * (gfx9..gfx12, sm_80..sm_120): that is chosen when compiling (compile/llvm_amdgpu.h, llvm_nvptx.h). */
#ifndef BG_COMPILE_KRENDER_LLVM_H
#define BG_COMPILE_KRENDER_LLVM_H

#include "compile/kernel_internal.h"
#include "compile/klinear.h"

/* Most threads per work-group the renderer asks for (the product of the local dims). */
enum { KLLVM_MAX_LOCAL = 256 };

/* A work-group reduce (bg_kopts.group): kopt splits the outermost reduce range r of axis A into
 * r_outer*g + r_group, r_group a REDUCE range of axis -1-A (so it sorts, and its loop opens, before
 * the other reduce ranges of its REDUCE). The AMDGPU flavour renders that loop as work-item id x
 * (lsz[0] = g) and combines the accumulators of its REDUCEs through LDS after it. */
enum { KR_TILE_SHIFT = 24 };
static inline int64_t kr_group_axis(int64_t axis) { return -1 - axis; }
static inline bool kr_is_group(const ir_node *r) {
  return kr_kind(r) == KR_REDUCE && kr_axis(r) < 0 && kr_axis(r) > -((int64_t)1 << KR_TILE_SHIFT);
}
/* Local tiles (bg_kopts.tile = T): kopt renames the matmul's reduce range (axis A) to axis
 * -(T << 24) - 1 - A; the AMDGPU flavour renders that loop as the tiled GEMM (others: a plain loop). */
static inline int64_t kr_tile_axis(unsigned t, int64_t axis) { return -((int64_t)t << KR_TILE_SHIFT) - 1 - axis; }
/* WMMA (bg_kopts.tc) uses the tile band with T = KR_TC. */
enum { KR_TC = 0xff };
static inline unsigned kr_tile_of(const ir_node *r) {
  if (kr_kind(r) != KR_REDUCE || kr_axis(r) > -((int64_t)1 << KR_TILE_SHIFT)) return 0;
  return (unsigned)((-1 - kr_axis(r)) >> KR_TILE_SHIFT);
}
/* The two loads of a matmul-shaped reduce value: value is built from CONST, CAST, ADD, SUB, MUL, MAX,
 * NEG and exactly two ungated, non-bool LOADs, one indexed by (red, row) ranges only, the other by
 * (red, col) (DEFINE_VARs allowed); ld[0] = the row one. 0 when it is, -1 when not. */
int kllvm_tile_loads(ir_ctx *ctx, const ir_node *value, const ir_node *red, const ir_node *row, const ir_node *col,
                     const ir_node *ld[2]);
/* WMMA: the value with its casts stripped is MUL of two (cast) loads, both float16 or both bfloat16
 * (*bf set for bfloat16), as kllvm_tile_loads orders them. 0 when it is, -1 when not. */
int kllvm_tc_loads(ir_ctx *ctx, const ir_node *value, const ir_node *red, const ir_node *row, const ir_node *col,
                   const ir_node *ld[2], bool *bf);
/* kopt_choose for AMD GPUs: bg_kopts.group and tile allowed; the heuristics add a group to reduces with
 * few outputs and tiles to matmul-shaped kernels (sink: the simplified kernel, for the pattern). */
/* mcpu picks the tensor-core form (ktc.h): tc is refused without one, and chosen by default where the form says so. */
int kopt_choose_amdgpu(ir_ctx *ctx, const ir_node *sink, const kinfo *info, const bg_kopts *opts, const char *mcpu,
                       bg_kopts *applied);

/* LLVM IR text of the linearized kernel l: `define amdgpu_kernel void @name(ptr addrspace(1) noalias
 * align 16 %data0, ..., i32 %var0, ...)`, buffers by slot then int32 variables (the CPU kernarg
 * layout). Output axes with constant extents become launch dims, innermost first: each takes the
 * largest divisor of its extent that keeps the work-group within KLLVM_MAX_LOCAL threads as a
 * local dim (x, y, z: at most 3) and the rest as a global dim (work-group count, at most 3);
 * axes left over stay loops. gsz = work-group counts, lsz = threads per work-group (1 when
 * unused). *src is malloc'd; *flops estimates the arithmetic per launch. 0 or -BG_E*. */
enum kllvm_flavour {
  KLLVM_AMDGPU,       /* amdgpu_kernel, addrspace(1) buffers, ids from llvm.amdgcn.* */
  KLLVM_NVPTX,        /* ptx_kernel, addrspace(1) buffers, ids from the PTX special registers, "nvvm.reqntid"
                       * the work-group size; float64 exp2/log2/sin are an error (PTX has no instruction) */
  KLLVM_HOST_TEST,    /* for tests on the host: `void NAME(ptr args, i32 gid.x/y/z, i32 lid.x/y/z)`, arguments
                       * read from the CPU kernarg block, generic pointers; the body is the same */  KLLVM_HOST,         /* CPU kernels (compile/llvm_host.h): the entry ABI of baregpu/compile.h, `void NAME(ptr args,
                       * ptr gid, ptr gsz, ptr lsz)`, calling an inlined body with noalias buffers; the CPU grid of
                       * klin_plan_cpu_grid (gid.x picks a chunk of the outermost output loop), lsz 1,1,1; float32/64
                       * multiply-adds as llvm.fma, "prefer-vector-width"="512" */
};
/* mcpu: the AMD processor (KLLVM_AMDGPU), whose tensor-core form (ktc.h) renders a tc kernel; else NULL. */
int krender_llvm(ir_ctx *ctx, const kinfo *info, klin *l, const char *name, enum kllvm_flavour flavour, const char *mcpu,
                 char **src, uint64_t *flops, uint32_t gsz[3], uint32_t lsz[3]);

/* ---- compile/kernel.c: the AMD and NVIDIA paths of the kernel compiler ---- */
/* bg_kernel_render with the LLVM IR renderer: k->src holds the IR, k->gsz/lsz the launch dims. */
int bg_kernel_render_amdgpu(ir_ctx *ctx, const ir_node *sink, const bg_kopts *opts, bg_kernel *k);   /* for gfx1100 */
/* The same for processor mcpu: its tensor-core form (ktc.h) and the heuristics' choice of it. */
int bg_kernel_render_amdgpu_for(ir_ctx *ctx, const ir_node *sink, const bg_kopts *opts, const char *mcpu, bg_kernel *k);
/* The same render in the KLLVM_NVPTX flavour (compile/llvm_nvptx.h turns it into PTX text). */
int bg_kernel_render_nvptx(ir_ctx *ctx, const ir_node *sink, const bg_kopts *opts, bg_kernel *k);
/* The same render in the KLLVM_HOST_TEST flavour (tests run it with a host JIT against the C path). */
int bg_kernel_render_llvm_host(ir_ctx *ctx, const ir_node *sink, const bg_kopts *opts, bg_kernel *k);
/* CPU kernels through LLVM: the KLLVM_HOST flavour, the host heuristics (kopt_host_heuristics) when opts is NULL. */
int bg_kernel_render_cpu_llvm(ir_ctx *ctx, const ir_node *sink, const bg_kopts *opts, bg_kernel *k);
/* Render in the KLLVM_HOST flavour + compile for this machine (compile/llvm_host.h) to an ELF relocatable
 * object (*obj malloc'd) for bg_program_load on the CPU device. Without LLVM: -BG_ENOTSUP. */
int bg_kernel_compile_host(ir_ctx *ctx, const ir_node *sink, const bg_kopts *opts, bg_kernel *k, void **obj, size_t *n);
/* Render + compile for mcpu ("gfx1100", ...) + check the code object against the render (kernarg
 * segment size = the arguments' bytes, max flat work-group size = lsz product, processor = mcpu).
 * No device needed. *elf is malloc'd. Without LLVM: -BG_ENOTSUP naming the package to install. */
int bg_kernel_compile_amdgpu(ir_ctx *ctx, const ir_node *sink, const bg_kopts *opts, const char *mcpu, bg_kernel *k,
                             void **elf, size_t *n);

#endif
