/* compile/kernel.h: the contract between the scheduler (tensor/) and the kernel compiler.
 *
 * A kernel AST is an ir graph at "kernel level", built by the scheduler in an ir_ctx of its own:
 *
 *   SINK( STORE(INDEX(DEFINE_GLOBAL 0, idx), value) )            one store per kernel output
 *
 *   DEFINE_GLOBAL  dtype IR_DT_PTR(scalar, IR_AS_GLOBAL), arg.i = parameter slot (0 = the output,
 *                  then each input buffer once, slots dense from 0). No sources.
 *   DEFINE_VAR     an int32 kernel variable (symbolic shapes), bounds in its info; passed after the
 *                  buffers, in the order of ir_vars() over the SINK.
 *   RANGE          dtype IR_DT_INDEX, src[0] = extent (CONST index, or an expression over
 *                  DEFINE_VARs), arg.i = (axis << 8) | kind, kind 0 = output (loop) axis,
 *                  1 = reduce axis. Axis numbers are unique within a kernel.
 *   INDEX          (DEFINE_GLOBAL, idx[, valid]) idx is an IR_DT_INDEX expression in elements over
 *                  RANGEs and DEFINE_VARs; valid (bool) gates the access: a gated LOAD yields 0.
 *   LOAD           src[0] = INDEX; dtype = the buffer's scalar.
 *   REDUCE         src[0] = value, src[1..] = the reduce RANGEs it closes; arg.i = IR_ADD or IR_MAX.
 *   ALU ops, CAST, BITCAST, CONST, THREEFRY(x: uint64, key: uint64) -> uint64 as in tinygrad.
 *
 * Output ranges appear in the STORE's index; reduce ranges only under their REDUCE. Index math is
 * simplified with ir's symbolic rules. Scalars: float32, float16 (stored as 16 bits, computed in
 * float32), int32, uint32, int64, uint64, bool (1 byte), int8/uint8/int16/uint16.
 *
 * CPU kernels follow the entry ABI of baregpu/compile.h; kernargs hold u64 buffer addresses by
 * slot, then int32 variables. AMD and NVIDIA kernels take the same arguments in the same order
 * (NVIDIA: one PTX .param each, at the offsets the cubin's .nv.info gives). */
#ifndef BG_COMPILE_KERNEL_H
#define BG_COMPILE_KERNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "baregpu/hcq.h"
#include "ir/ir.h"

/* Optimization choices for one kernel (heuristics fill them; BEAM later searches them). */
typedef struct bg_kopts {
  uint8_t upcast[8];      /* per output axis (by position in the store index's ranges): unroll factor */
  uint8_t unroll;         /* unroll factor of the innermost reduce range */
  uint16_t group;         /* AMD GPUs: threads of a work-group sharing the outermost reduce range (strided slices,
                           * partials combined through LDS after a barrier); 0/1 = none. Other targets: -BG_EINVAL */
  uint8_t tile;           /* AMD GPUs, matmul-shaped kernels: T x T work-groups stage T x T tiles of both inputs in LDS
                           * per step of the reduce (classic tiled GEMM); excludes upcast/unroll/group; 0/1 = none */
  bool tc;                /* AMD RDNA3 (gfx11), float16/bfloat16 matmul with float32 sums: one wave32 per 16 x 16
                           * output tile, V_WMMA_F32_16X16X16_F16/BF16 per 16 of the reduce; excludes the others */
  bool no_opt;            /* render the AST as is (for tests) */
} bg_kopts;

/* A compiled kernel ready for bg_program_load. */
typedef struct bg_kernel {
  char name[64];          /* tinygrad-style: E_<extents> for elementwise, r_<extents> with a reduce */
  char *src;              /* rendered source (malloc'd): C for the CPU, LLVM IR for AMD and NVIDIA GPUs */
  unsigned nbufs;         /* DEFINE_GLOBAL slots */
  unsigned nvars;         /* int32 variables after the buffers */
  const ir_node *vars[16];/* the DEFINE_VARs in argument order */
  uint8_t arg_sizes[64];  /* 8 per buffer, 4 per variable */
  uint32_t gsz[3], lsz[3];/* launch dimensions */
  bg_kopts opts;          /* what was applied */
  uint64_t flops;         /* estimated operations, for benches */
} bg_kernel;

/* Lower, optimize (opts NULL = heuristics), linearize and render a kernel AST to C.
 * Errors name the kernel and the offending node. bg_kopts.upcast[p] applies to the p-th output
 * RANGE in ascending axis order; unroll to the reduce RANGE with the largest axis (compile/README.md). */
int bg_kernel_render(ir_ctx *ctx, const ir_node *sink, const bg_kopts *opts, bg_kernel *out);
void bg_kernel_free(bg_kernel *k);
/* The contract checks bg_kernel_render starts with: 0, or -BG_EINVAL with a message naming the
 * offending node (op, dtype, expression). */
int bg_kernel_verify(ir_ctx *ctx, const ir_node *sink);
/* Render + compile + bg_program_load on d: arch "host" -> C + bg_compile_c; "gfx*" -> LLVM IR -> AMD
 * code object (compile/krender_llvm.h); "sm_XY" -> LLVM IR -> PTX text (bg_kernel_compile_nvptx),
 * loaded as text (size strlen + 1: the NV backend turns it into a cubin for the device). GPU archs
 * give -BG_ENOTSUP when built without LLVM. gsz/lsz = launch dims. */
/* Render in the NVPTX flavour + compile to PTX for sm ("sm_90", ...) + check the PTX against the
 * render (an .entry named k->name with one .param per argument, .reqntid = lsz). No device needed.
 * *ptx is malloc'd and NUL-terminated. Without LLVM: -BG_ENOTSUP naming the package to install. */
int bg_kernel_compile_nvptx(ir_ctx *ctx, const ir_node *sink, const bg_kopts *opts, const char *sm, bg_kernel *k,
                            char **ptx);
int bg_kernel_build(bg_dev *d, ir_ctx *ctx, const ir_node *sink, const bg_kopts *opts, bg_kernel *k, bg_program **prg);

#endif
