/* compile/kernel_internal.h: what the kernel compiler's passes share (private to compile/k*.c).
 *
 * Pipeline of bg_kernel_render (compile/kernel.c):
 *   kverify      contract checks, facts about the kernel (buffers, variables, ranges)
 *   ksimplify    symbolic rules + gated INDEX rules (valid clauses, index simplified under them)
 *   kopt_*       choose optimizations (heuristics or bg_kopts), split ranges, name the kernel
 *   kexpand      UNROLL/UPCAST ranges replaced by constants: copies of the dependent subgraph
 *   kdecomp      float16/bfloat16 arithmetic computed in float32
 *   klinearize   loops, hoisting, REDUCE lowered to accumulators
 *   krender_c    C source with the CPU entry ABI of baregpu/compile.h */
#ifndef BG_COMPILE_KERNEL_INTERNAL_H
#define BG_COMPILE_KERNEL_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "compile/kernel.h"

/* RANGE arg.i = axis << 8 | kind. The contract's kinds are LOOP (output) and REDUCE; the
 * optimizer adds UPCAST (inner part of a split output axis) and UNROLL (of a reduce axis), which
 * kexpand removes before linearizing. */
enum { KR_LOOP = 0, KR_REDUCE = 1, KR_UPCAST = 2, KR_UNROLL = 3 };
static inline int64_t kr_axis(const ir_node *r) { return r->arg.i >> 8; }
static inline int kr_kind(const ir_node *r) { return (int)(r->arg.i & 0xff); }
static inline int64_t kr_arg(int64_t axis, int kind) { return (int64_t)((uint64_t)axis << 8) | kind; }

enum { KMAX_BUFS = 48, KMAX_VARS = 16, KMAX_RANGES = 64, KMAX_UPCAST = 64, KMAX_UNROLL = 32 };

/* Facts about a verified kernel AST. */
typedef struct kinfo {
  unsigned nbufs;                       /* DEFINE_GLOBAL slots, dense from 0 */
  ir_dtype buf_dt[KMAX_BUFS];           /* scalar of each slot */
  bool buf_written[KMAX_BUFS];          /* some STORE targets the slot */
  unsigned nvars;                       /* DEFINE_VARs in ir_vars order */
  const ir_node *vars[KMAX_VARS];
  unsigned nout, nred;                  /* RANGEs by kind, each sorted by axis */
  const ir_node *out[KMAX_RANGES], *red[KMAX_RANGES];
  int64_t max_axis;                     /* largest axis number in use (-1 if none) */
  bool has_reduce;
} kinfo;

/* ---- kverify.c ---- */
/* ir_verify + the kernel contract of compile/kernel.h. -BG_EINVAL with a message naming the
 * offending node (op, dtype and ir_render_expr form) on violation. */
int kverify(ir_ctx *ctx, const ir_node *sink, kinfo *info);
/* Every RANGE reachable from root (distinct nodes), sorted by kind then axis; returns the count
 * or -1 when more than max (message set). */
int kcollect_ranges(ir_ctx *ctx, const ir_node *root, const ir_node **out, int max);
/* Text of u for messages: "OP dtype 'expr'". */
void kdescribe(const ir_node *u, char *buf, size_t n);

/* ---- ksimplify.c ---- */
/* ir_symbolic_rules + gate rules: INDEX valid clauses that always hold dropped, the index
 * simplified under the bounds its valid implies, LOADs through a never-valid INDEX become 0 and
 * never-valid STOREs are dropped. NULL with a message on failure. */
const ir_node *ksimplify(ir_ctx *ctx, const ir_node *root);

/* ---- kopt.c ---- */
/* Fills *applied from opts (validated: -BG_EINVAL naming the axis and extent) or, with opts NULL,
 * from the CPU heuristics. */
int kopt_choose(const kinfo *info, const bg_kopts *opts, bg_kopts *applied);
/* Replaces *applied by the heuristics for CPU kernels compiled by LLVM for the host (wide vectors, FMA). */
void kopt_host_heuristics(const kinfo *info, bg_kopts *applied);
/* Splits the chosen ranges r -> r_outer*f + r_inner (inner: UPCAST/UNROLL kind). NULL on error. */
const ir_node *kopt_apply(ir_ctx *ctx, const ir_node *sink, const kinfo *info, const bg_kopts *applied);
/* tinygrad-style name from the ranges of an optimized sink: E_/r_ then the extents of the output
 * axes, upcast axes, reduce axes, unroll axes. */
void kopt_name(ir_ctx *ctx, const ir_node *sink, char *name, size_t n);

/* ---- kexpand.c ---- */
/* UNROLL ranges: REDUCE(v, .., u) -> REDUCE(VECTORIZE(v[u=0], .., v[u=f-1]), ..): the lanes are
 * combined into the accumulator in order, so results equal the plain loop's bit for bit.
 * UPCAST ranges: each STORE duplicated for every value of the upcast ranges it depends on. */
const ir_node *kexpand(ir_ctx *ctx, const ir_node *sink);

/* ---- klower_half.c ---- */
/* float16/bfloat16 values are stored as 16 bits; every ALU op on them is computed in float32 and
 * rounded back (per-op rounding, as IEEE half arithmetic), REDUCEs accumulate in float32. */
const ir_node *kdecomp(ir_ctx *ctx, const ir_node *sink);
/* The host-side conversions with the prelude's semantics are util/half.h's. */

/* ---- kstr.c: growable string ---- */
typedef struct kstr {
  char *p;
  size_t len, cap;
  bool oom;
} kstr;
void kstr_puts(kstr *s, const char *t);
void kstr_printf(kstr *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void kstr_vprintf(kstr *s, const char *fmt, va_list ap);
char *kstr_take(kstr *s);               /* the string (caller frees); NULL after an OOM */
void kstr_free(kstr *s);

#endif
