/* compile/krender_llvm.c: LLVM IR text for AMD and NVIDIA GPUs from a linearized kernel (see
 * krender_llvm.h). The targets differ only in the few things struct ktarget holds.
 *
 * Shape of the output:
 *   define amdgpu_kernel void @NAME(ptr addrspace(1) noalias align 16 %data0, ..., i32 %var0) #0 !reqd_work_group_size !0 {
 *   entry:
 *     accumulators as allocas in addrspace(5) (SROA turns them into registers), work-group and
 *     work-item ids, then the loop tree: every value an SSA name, loops as head/body/latch/exit
 *     blocks with a phi counter, gated loads as a branch around the load and a phi with 0, gated
 *     stores as a branch around the store (a masked-off lane must not touch memory).
 *   }
 *   helpers (bg_threefry2x32), intrinsic declarations, attributes, !reqd_work_group_size.
 * Types: bool is i1 in registers and i8 in memory, float16 is half (bfloat16 bfloat) storage whose
 * arithmetic kdecomp already moved to float; index math is i32 when ir_vmin/ir_vmax fit in 32 bits,
 * else i64, each op computed in the wider of its operands. Semantics match the C renderer: integer
 * arithmetic wraps, x / -1 and x % -1 are guarded, shifts by >= the width give 0 (arithmetic right
 * shift: the sign), float max is `a >= b ? a : b`, comparisons are ordered except != (true on NaN),
 * multiply-add is a separate multiply and add (no contraction) on the GPUs; the CPU flavour KLLVM_HOST
 * makes every float32/float64 multiply-add (MULACC, a sum of products) one llvm.fma (emit_fma). */
#include "compile/krender_llvm.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baregpu/error.h"
#include "compile/kmath64.h"
#include "compile/ktc.h"
#include "util/half.h"

typedef const ir_node *node;

enum { NRING = 16, TXT = 128, MAX_MAPPED = 6 };

/* An output loop that became launch dims: range = gid * l + lid (either part absent when 1). */
typedef struct mapped {
  const kitem *loop;
  int gdim, ldim;           /* -1: none */
  uint32_t l;
} mapped;

typedef struct rctx {
  ir_ctx *ctx;
  const kinfo *info;
  kstr pro, body;           /* entry-block prologue (allocas, ids) and the rest */
  char ring[NRING][TXT];    /* operand texts, valid for a few instructions */
  unsigned ringpos;
  unsigned nv, nblocks, nacc, nloops;
  char cur[64];             /* label of the block being emitted */
  bool threefry;
  bool prefetch;            /* llvm.prefetch is used */
  struct pfline {           /* cache lines prefetched: buffer, index without its constant, stride, constant */
    const kscope *scope;
    node buf, base;
    int64_t stride, off;
  } pf[64];
  unsigned npf;
  unsigned intrinsics;      /* bit (op index * 2 + f64) of the math intrinsics used */
  mapped map[MAX_MAPPED];
  unsigned nmap;
  bool host;                /* KLLVM_HOST_TEST: generic pointers, ids and arguments as parameters */
  bool cpu;                 /* KLLVM_HOST: the CPU entry ABI around a noalias body, the CPU grid */
  unsigned fma;             /* bit 0/1: llvm.fma.f32/f64 is used (KLLVM_HOST multiply-adds) */
  const klin *grid;         /* KLLVM_HOST: grid_loop runs this work-group's chunk */
  const struct ktarget *tg; /* the target's specifics (TG_AMDGPU, TG_NVPTX, TG_HOST) */
  const char *gptr, *pptr;  /* pointer types of buffers and of accumulators */
  uint64_t flops;
  int err;
  /* work-group reduce (AMDGPU): group threads in lid.x, LDS arrays in glob */
  uint32_t group, threads;  /* threads per group (0: none), per work-group */
  kstr glob;                /* module-level definitions (LDS arrays) */
  uint32_t tile;            /* local tiles: T (0: none); the row and column output loops */
  const kitem *tile_row, *tile_col;
  unsigned wmma;            /* matrix intrinsics used: bit 0 f16, bit 1 bf16 (declared once at the end) */
  ktc_form tcf;             /* the processor's tensor-core form (ktc.h), for tc kernels */
  const ktc_shape *tcs;
  unsigned nlds;
  bool barrier;
} rctx;

/* ---- targets ---- */

enum { NMATH = 5 };
/* What differs between the GPU targets; the body of the kernel is the same IR. */
typedef struct ktarget {
  const char *triple, *cc;    /* target triple, kernel calling convention */
  const char *gptr;           /* pointer type of the buffers (the global address space) */
  const char *alloca_as;      /* address space suffix of an alloca ("" = 0) and the matching pointer type */
  const char *pptr;
  const char *group_id, *local_id;   /* i32 intrinsics for the work-group and work-item index, + x/y/z */
  /* math intrinsics (math_ops order) for f32 and f64; NULL: the target has no instruction for it */
  const char *math[NMATH][2];
} ktarget;

/* AMDGPU: buffers in addrspace(1), private (scratch) allocas in addrspace(5), ids from llvm.amdgcn.*
 * (LLVM AMDGPUUsage "Address Spaces"). The backend has no lowering of float64 exp2/log2 (libcalls it
 * lacks) and sin (an abort in instruction selection): those are the functions of compile/kmath64.c. */
static const ktarget TG_AMDGPU = {
    .triple = "amdgcn-amd-amdhsa", .cc = "amdgpu_kernel", .gptr = "ptr addrspace(1)", .alloca_as = ", addrspace(5)",
    .pptr = "ptr addrspace(5)", .group_id = "llvm.amdgcn.workgroup.id.", .local_id = "llvm.amdgcn.workitem.id.",
    .math = {{"llvm.exp2.f32", "bg_exp2_f64"}, {"llvm.log2.f32", "bg_log2_f64"}, {"llvm.sin.f32", "bg_sin_f64"},
             {"llvm.sqrt.f32", "llvm.sqrt.f64"}, {"llvm.trunc.f32", "llvm.trunc.f64"}}};

/* NVPTX: kernels are the ptx_kernel calling convention (LLVM NVPTXUsage "Kernel entry points"; the
 * nvvm.annotations kernel flag is gone), buffers in addrspace(1) (.global), allocas stay generic
 * (NVPTXLowerAlloca moves them to .local), ids are the PTX special registers %ctaid / %tid. NVPTX
 * has no libcalls: llvm.log2/sin/exp2 would end in an abort in instruction selection, so they are
 * the PTX approximate instructions (tinygrad renderer/ptx.py uses ex2/lg2/sin.approx alike) and
 * the float64 forms, which PTX lacks, are a render error. */
static const ktarget TG_NVPTX = {
    .triple = "nvptx64-nvidia-cuda", .cc = "ptx_kernel", .gptr = "ptr addrspace(1)", .alloca_as = "", .pptr = "ptr",
    .group_id = "llvm.nvvm.read.ptx.sreg.ctaid.", .local_id = "llvm.nvvm.read.ptx.sreg.tid.",
    .math = {{"llvm.nvvm.ex2.approx.f", NULL}, {"llvm.nvvm.lg2.approx.f", NULL}, {"llvm.nvvm.sin.approx.f", NULL},
             {"llvm.sqrt.f32", "llvm.sqrt.f64"}, {"llvm.trunc.f32", "llvm.trunc.f64"}}};

/* The host test flavour: generic pointers, math through the plain intrinsics. */
static const ktarget TG_HOST = {
    .triple = NULL, .cc = "", .gptr = "ptr", .alloca_as = "", .pptr = "ptr", .group_id = NULL, .local_id = NULL,
    .math = {{"llvm.exp2.f32", "llvm.exp2.f64"}, {"llvm.log2.f32", "llvm.log2.f64"}, {"llvm.sin.f32", "llvm.sin.f64"},
             {"llvm.sqrt.f32", "llvm.sqrt.f64"}, {"llvm.trunc.f32", "llvm.trunc.f64"}}};

/* ---- types ---- */

/* LLVM type of a value in registers. */
static const char *scalar_lty(enum ir_scalar s) {
  switch (s) {
  case IR_DT_BOOL: return "i1";
  case IR_DT_INT8: case IR_DT_UINT8: return "i8";
  case IR_DT_INT16: case IR_DT_UINT16: return "i16";
  case IR_DT_INT32: case IR_DT_UINT32: return "i32";
  case IR_DT_INT64: case IR_DT_UINT64: case IR_DT_INDEX: return "i64";
  case IR_DT_FLOAT16: return "half";
  case IR_DT_BFLOAT16: return "bfloat";
  case IR_DT_FLOAT32: return "float";
  case IR_DT_FLOAT64: return "double";
  default: return "void";
  }
}

static bool fits32(rctx *r, node u) { return ir_vmin(r->ctx, u) >= INT32_MIN && ir_vmax(r->ctx, u) <= INT32_MAX; }

/* Index-like: computed in i32 or i64 by its bounds (DEFINE_VARs are always i32). */
static bool indexlike(node u) { return u->op == IR_DEFINE_VAR || IR_DT_SCALAR(u->dt) == IR_DT_INDEX; }

static const char *lty(rctx *r, node u) {
  if (u->op == IR_DEFINE_VAR) return "i32";
  if (IR_DT_SCALAR(u->dt) == IR_DT_INDEX) return fits32(r, u) ? "i32" : "i64";
  return scalar_lty(IR_DT_SCALAR(u->dt));
}

static bool is_float_ty(const char *t) { return t[0] != 'i'; }
static unsigned int_bits(const char *t) { return (unsigned)atoi(t + 1); }
/* Memory type: bool is a byte. */
static const char *mem_ty(enum ir_scalar s) { return s == IR_DT_BOOL ? "i8" : scalar_lty(s); }

/* ---- text helpers ---- */

static char *ring(rctx *r) {
  char *b = r->ring[r->ringpos++ % NRING];
  b[0] = 0;
  return b;
}

static unsigned fresh(rctx *r) { return r->nv++; }

static void emit(rctx *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void emit(rctx *r, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  kstr_puts(&r->body, "  ");
  kstr_vprintf(&r->body, fmt, ap);
  kstr_puts(&r->body, "\n");
  va_end(ap);
}

static void label(rctx *r, const char *name) {
  kstr_printf(&r->body, "%s:\n", name);
  snprintf(r->cur, sizeof r->cur, "%s", name);
}

static char *dupstr(const char *s) {
  size_t n = strlen(s) + 1;
  char *p = malloc(n);
  if (p) memcpy(p, s, n);
  return p;
}

static void set_text(rctx *r, kitem *it, const char *t) {
  free(it->text);
  if (!(it->text = dupstr(t)) && !r->err) r->err = bg_error(BG_ENOMEM, "kernel: out of memory rendering");
}

static void fail_node(rctx *r, node u, const char *what) {
  char d[256];
  kdescribe(u, d, sizeof d);
  if (!r->err) r->err = bg_error(BG_EINVAL, "kernel: llvm render: %s: %s", what, d);
}

/* ---- literals ---- */

static void lit_float(char *b, size_t n, double v, const char *ty) {
  if (!strcmp(ty, "half") || !strcmp(ty, "bfloat")) {
    uint16_t h = !strcmp(ty, "half") ? bg_f32_to_f16((float)v) : bg_f32_to_bf16((float)v);
    snprintf(b, n, "0x%c%04X", ty[0] == 'h' ? 'H' : 'R', h);
    return;
  }
  if (!strcmp(ty, "float")) v = (double)(float)v;   /* LLVM wants a float constant exactly representable */
  uint64_t bits;
  memcpy(&bits, &v, sizeof bits);
  snprintf(b, n, "0x%016" PRIX64, bits);
}

static void lit_int(char *b, size_t n, int64_t v, const char *ty) {
  if (!strcmp(ty, "i1")) snprintf(b, n, "%s", v ? "true" : "false");
  else if (!strcmp(ty, "i64")) snprintf(b, n, "%" PRId64, v);
  else {   /* the value as the signed integer of that width: LLVM accepts either spelling */
    unsigned w = int_bits(ty);
    int64_t s = (int64_t)((uint64_t)v << (64 - w)) >> (64 - w);
    snprintf(b, n, "%" PRId64, s);
  }
}

/* The constant u as type ty (ty may be wider than its own for index constants). */
static const char *lit_const(rctx *r, node u, const char *ty) {
  char *b = ring(r);
  if (ir_scalar_is_float(IR_DT_SCALAR(u->dt))) lit_float(b, TXT, u->arg.f, ty);
  else lit_int(b, TXT, u->arg.i, ty);
  return b;
}

static const char *zero_of(rctx *r, const char *ty) {
  char *b = ring(r);
  if (is_float_ty(ty)) lit_float(b, TXT, 0.0, ty);
  else lit_int(b, TXT, 0, ty);
  return b;
}

/* ---- conversions ---- */

/* Converts text v of type `from` to type `to` with C cast semantics (the signedness and boolness of
 * each side choose sext/zext, sitofp/uitofp, fptosi/fptoui, != 0). */
/* t = float v as bfloat, round to nearest even in integer ops (compile/kprelude.c's bg_f2bf): LLVM's fptrunc
 * float -> bfloat becomes VCVTNEPS2BF16 on x86 CPUs with AVX512-BF16, which flushes denormals to zero. */
static void emit_f2bf(rctx *r, const char *t, const char *v) {
  unsigned n = fresh(r);
  emit(r, "%%b%u.i = bitcast float %s to i32", n, v);
  emit(r, "%%b%u.h = lshr i32 %%b%u.i, 16", n, n);
  emit(r, "%%b%u.l = and i32 %%b%u.h, 1", n, n);
  emit(r, "%%b%u.a = add i32 %%b%u.i, 32767", n, n);
  emit(r, "%%b%u.s = add i32 %%b%u.a, %%b%u.l", n, n, n);
  emit(r, "%%b%u.r = lshr i32 %%b%u.s, 16", n, n);
  emit(r, "%%b%u.q = or i32 %%b%u.h, 64", n, n);               /* NaN: keep it, quiet */
  emit(r, "%%b%u.n = fcmp uno float %s, 0.0", n, v);
  emit(r, "%%b%u.m = select i1 %%b%u.n, i32 %%b%u.q, i32 %%b%u.r", n, n, n, n);
  emit(r, "%%b%u.w = trunc i32 %%b%u.m to i16", n, n);
  emit(r, "%s = bitcast i16 %%b%u.w to bfloat", t, n);
}

static void emit_fptrunc_f32(rctx *r, const char *t, const char *v, const char *to) {
  if (!strcmp(to, "bfloat")) emit_f2bf(r, t, v);
  else emit(r, "%s = fptrunc float %s to %s", t, v, to);
}

/* t = double v as half/bfloat in ONE rounding: v rounded to odd into float (truncated, lowest bit set when
 * inexact; float keeps 13 bits more than half, enough: Boldo & Melquiond's round-to-odd), then fptrunc. A
 * plain fptrunc double -> bfloat/half is a libcall on x86 (__truncdfbf2, absent from the process) and
 * fptrunc through float would round twice (1 + 2^-8 + 2^-40 -> 1 instead of 1 + 2^-7). */
static void emit_d2half(rctx *r, const char *t, const char *v, const char *to) {
  unsigned n = fresh(r);
  emit(r, "%%o%u.f = fptrunc double %s to float", n, v);
  emit(r, "%%o%u.b = fpext float %%o%u.f to double", n, n);
  emit(r, "%%o%u.x = fcmp one double %%o%u.b, %s", n, n, v);    /* inexact (false for NaN) */
  emit(r, "%%o%u.g = fcmp ogt double %%o%u.b, %s", n, n, v);
  emit(r, "%%o%u.p = fcmp ogt double %s, 0.0", n, v);
  emit(r, "%%o%u.a = icmp eq i1 %%o%u.g, %%o%u.p", n, n, n);   /* rounded away from zero */
  emit(r, "%%o%u.i = bitcast float %%o%u.f to i32", n, n);
  emit(r, "%%o%u.d = zext i1 %%o%u.a to i32", n, n);
  emit(r, "%%o%u.t = sub i32 %%o%u.i, %%o%u.d", n, n, n);
  emit(r, "%%o%u.o = or i32 %%o%u.t, 1", n, n);
  emit(r, "%%o%u.s = select i1 %%o%u.x, i32 %%o%u.o, i32 %%o%u.i", n, n, n, n);
  emit(r, "%%o%u.r = bitcast i32 %%o%u.s to float", n, n);
  char f[TXT];
  snprintf(f, sizeof f, "%%o%u.r", n);
  emit_fptrunc_f32(r, t, f, to);
}

static const char *convert(rctx *r, const char *v, const char *from, bool from_signed, bool from_bool, const char *to,
                           bool to_signed, bool to_bool) {
  if (!strcmp(from, to)) return v;
  char *t = ring(r);
  unsigned n = fresh(r);
  snprintf(t, TXT, "%%c%u", n);
  bool ff = is_float_ty(from), tf = is_float_ty(to);
  if (to_bool) {
    if (ff) emit(r, "%s = fcmp une %s %s, %s", t, from, v, zero_of(r, from));
    else emit(r, "%s = icmp ne %s %s, 0", t, from, v);
  } else if (from_bool) {
    if (tf) emit(r, "%s = uitofp i1 %s to %s", t, v, to);
    else emit(r, "%s = zext i1 %s to %s", t, v, to);
  } else if (ff && tf) {
    static const char *order[] = {"half", "bfloat", "float", "double"};
    int a = 0, b = 0;
    for (int i = 0; i < 4; i++) {
      if (!strcmp(order[i], from)) a = i;
      if (!strcmp(order[i], to)) b = i;
    }
    if (a <= 1 && b <= 1) {   /* half <-> bfloat: through float */
      char m[TXT];
      snprintf(m, sizeof m, "%%c%u", fresh(r));
      emit(r, "%s = fpext %s %s to float", m, from, v);
      emit_fptrunc_f32(r, t, m, to);
    } else if (a == 3 && b <= 1) {
      emit_d2half(r, t, v, to);
    } else if (a == 2 && b == 1) {
      emit_f2bf(r, t, v);
    } else {
      emit(r, "%s = %s %s %s to %s", t, a < b ? "fpext" : "fptrunc", from, v, to);
    }
  } else if (ff) {
    emit(r, "%s = %s %s %s to %s", t, to_signed ? "fptosi" : "fptoui", from, v, to);
  } else if (tf && (!strcmp(to, "half") || !strcmp(to, "bfloat"))) {   /* int -> 16-bit float: through double */
    char m[TXT];
    snprintf(m, sizeof m, "%%c%u", fresh(r));
    emit(r, "%s = %s %s %s to double", m, from_signed ? "sitofp" : "uitofp", from, v);
    emit_d2half(r, t, m, to);
  } else if (tf) {
    emit(r, "%s = %s %s %s to %s", t, from_signed ? "sitofp" : "uitofp", from, v, to);
  } else {
    unsigned a = int_bits(from), b = int_bits(to);
    emit(r, "%s = %s %s %s to %s", t, a > b ? "trunc" : from_signed ? "sext" : "zext", from, v, to);
  }
  return t;
}

/* ---- operands ---- */

static int var_index(rctx *r, node u) {
  for (unsigned i = 0; i < r->info->nvars; i++)
    if (r->info->vars[i] == u) return (int)i;
  fail_node(r, u, "variable not among the kernel's arguments");
  return 0;
}

/* The value of operand o as type want (index widths adjusted; other types must already match). */
static const char *opnd(rctx *r, kitem *o, const char *want) {
  node u = o->u;
  if (o->kind == KI_LEAF && u->op == IR_CONST) return lit_const(r, u, want ? want : lty(r, u));
  const char *have = lty(r, u);
  const char *v;
  if (o->kind == KI_LEAF) {
    char *b = ring(r);
    snprintf(b, TXT, "%%var%d", var_index(r, u));
    v = b;
  } else if (o->kind == KI_ACC) {   /* accumulators live in allocas: read where used */
    char *b = ring(r);
    snprintf(b, TXT, "%%v%u", fresh(r));
    emit(r, "%s = load %s, %s %s", b, have, r->pptr, o->text ? o->text : "%acc?");
    v = b;
  } else {
    if (!o->text) {
      fail_node(r, u, "operand used before it was computed");
      return "undef";
    }
    v = o->text;
  }
  if (!want || !strcmp(want, have)) return v;
  if (!indexlike(u) || is_float_ty(want)) {
    char d[160];
    snprintf(d, sizeof d, "operand of type %s where %s is needed", have, want);
    fail_node(r, u, d);
    return v;
  }
  return convert(r, v, have, true, false, want, true, false);
}

/* The type an op over sources src[first..first+n) computes in: index-like operands widen to the
 * widest of them (and of the result, for index results). */
static const char *compute_ty(rctx *r, node u, unsigned first, unsigned n) {
  bool any_index = indexlike(u) && IR_DT_SCALAR(u->dt) == IR_DT_INDEX, wide = any_index && !strcmp(lty(r, u), "i64");
  for (unsigned i = first; i < first + n && i < u->nsrc; i++)
    if (indexlike(u->src[i])) {
      any_index = true;
      wide |= !strcmp(lty(r, u->src[i]), "i64");
    }
  if (any_index) return wide ? "i64" : "i32";
  return lty(r, u->src[first]);
}

/* ---- ALU ---- */

/* Index into ktarget.math: exp2, log2, sin, sqrt, trunc. */
static int math_index(enum ir_op op) {
  switch (op) {
  case IR_EXP2: return 0;
  case IR_LOG2: return 1;
  case IR_SIN: return 2;
  case IR_SQRT: return 3;
  case IR_TRUNC: return 4;
  default: return -1;
  }
}

/* KLLVM_HOST: a float32/float64 multiply-add a*b+c is one llvm.fma (one rounding), always, whatever the
 * optimization choice: `contract` flags would leave the fusion to LLVM (the SLP vectorizer may multiply a
 * vector of products first, then add them one by one), so results would change with upcast/unroll and BEAM
 * could not compare candidates bit for bit. Integers and float16/bfloat16 (a CAST of the rounded product, not a
 * MUL) never fuse. NaN and infinity propagate as in a*b+c (no fast-math flags). */
static bool fma_type(rctx *r, const char *ty) { return r->cpu && (!strcmp(ty, "float") || !strcmp(ty, "double")); }

static const char *emit_fma(rctx *r, const char *ty, const char *a, const char *b, const char *c) {
  char *t = ring(r);
  bool f64 = !strcmp(ty, "double");
  snprintf(t, TXT, "%%v%u", fresh(r));
  emit(r, "%s = call %s @llvm.fma.%s(%s %s, %s %s, %s %s)", t, ty, f64 ? "f64" : "f32", ty, a, ty, b, ty, c);
  r->fma |= f64 ? 2u : 1u;
  return t;
}

/* Text of (op a b) of type ty into a new name; src gives operand nodes for constant shortcuts
 * (NULL for accumulator updates). Signedness from the scalar sc. */
static const char *alu2(rctx *r, enum ir_op op, const char *ty, enum ir_scalar sc, const char *a, const char *b, node bsrc) {
  char *t = ring(r);
  snprintf(t, TXT, "%%v%u", fresh(r));
  const bool fl = is_float_ty(ty), sg = ir_scalar_is_signed(sc) || sc == IR_DT_INDEX;
  int64_t k;
  switch (op) {
  case IR_ADD: emit(r, "%s = %s %s %s, %s", t, fl ? "fadd" : "add", ty, a, b); break;
  case IR_SUB: emit(r, "%s = %s %s %s, %s", t, fl ? "fsub" : "sub", ty, a, b); break;
  case IR_MUL: emit(r, "%s = %s %s %s, %s", t, fl ? "fmul" : "mul", ty, a, b); break;
  case IR_FDIV: emit(r, "%s = fdiv %s %s, %s", t, ty, a, b); break;
  case IR_AND: emit(r, "%s = and %s %s, %s", t, ty, a, b); break;
  case IR_OR: emit(r, "%s = or %s %s, %s", t, ty, a, b); break;
  case IR_XOR: emit(r, "%s = xor %s %s, %s", t, ty, a, b); break;
  case IR_MAX: {
    char c[TXT];
    snprintf(c, sizeof c, "%%v%u", fresh(r));
    if (fl) emit(r, "%s = fcmp oge %s %s, %s", c, ty, a, b);
    else emit(r, "%s = icmp %s %s %s, %s", c, sg && strcmp(ty, "i1") ? "sge" : "uge", ty, a, b);
    emit(r, "%s = select i1 %s, %s %s, %s %s", t, c, ty, a, ty, b);
    break;
  }
  case IR_CMPLT: case IR_CMPNE: case IR_CMPEQ: {
    const char *pred = op == IR_CMPNE ? (fl ? "une" : "ne") : op == IR_CMPEQ ? (fl ? "oeq" : "eq")
                       : fl ? "olt" : (sg && strcmp(ty, "i1")) ? "slt" : "ult";
    emit(r, "%s = %s %s %s %s, %s", t, fl ? "fcmp" : "icmp", pred, ty, a, b);
    break;
  }
  case IR_IDIV: case IR_MOD: {
    const char *dop = op == IR_IDIV ? (sg ? "sdiv" : "udiv") : (sg ? "srem" : "urem");
    /* unlike C, LLVM does not promote narrow types: MIN / -1 overflows in every signed width */
    bool guard = sg && sc != IR_DT_INDEX && (!bsrc || !ir_is_const(bsrc, &k) || k == -1);
    if (!guard) {
      emit(r, "%s = %s %s %s, %s", t, dop, ty, a, b);
      break;
    }
    /* x / -1 overflows for the minimum: computed as 0 - x (x % -1 = 0), the divisor replaced by 1 */
    unsigned c = fresh(r), d = fresh(r), q = fresh(r), ng = fresh(r);
    emit(r, "%%v%u = icmp eq %s %s, -1", c, ty, b);
    emit(r, "%%v%u = select i1 %%v%u, %s 1, %s %s", d, c, ty, ty, b);
    emit(r, "%%v%u = %s %s %s, %%v%u", q, dop, ty, a, d);
    if (op == IR_IDIV) emit(r, "%%v%u = sub %s 0, %s", ng, ty, a);
    else emit(r, "%%v%u = add %s 0, 0", ng, ty);
    emit(r, "%s = select i1 %%v%u, %s %%v%u, %s %%v%u", t, c, ty, ng, ty, q);
    break;
  }
  case IR_SHL: case IR_SHR: {
    if (fl || !strcmp(ty, "i1")) {
      if (!r->err) r->err = bg_error(BG_EINVAL, "kernel: llvm render: shift of %s values", ty);
      break;
    }
    unsigned w = int_bits(ty);
    const char *sop = op == IR_SHL ? "shl" : sg ? "ashr" : "lshr";
    if (bsrc && ir_is_const(bsrc, &k)) {
      uint64_t amt = (uint64_t)k;
      if (amt >= w && (op == IR_SHL || !sg)) emit(r, "%s = add %s 0, 0", t, ty);
      else emit(r, "%s = %s %s %s, %u", t, sop, ty, a, amt >= w ? w - 1 : (unsigned)amt);
      break;
    }
    unsigned ok = fresh(r), s = fresh(r);
    emit(r, "%%v%u = icmp ult %s %s, %u", ok, ty, b, w);
    if (op == IR_SHR && sg) {   /* amounts >= width shift by width-1: the sign */
      unsigned amt = fresh(r);
      emit(r, "%%v%u = select i1 %%v%u, %s %s, %s %u", amt, ok, ty, b, ty, w - 1);
      emit(r, "%s = ashr %s %s, %%v%u", t, ty, a, amt);
    } else {
      emit(r, "%%v%u = %s %s %s, %s", s, sop, ty, a, b);
      emit(r, "%s = select i1 %%v%u, %s %%v%u, %s 0", t, ok, ty, s, ty);
    }
    break;
  }
  default:
    if (!r->err) r->err = bg_error(BG_EINVAL, "kernel: llvm render: no LLVM form for op %s", ir_op_name(op));
  }
  return t;
}

static void render_expr(rctx *r, kitem *it) {
  node u = it->u;
  enum ir_op op = (enum ir_op)u->op;
  const char *rt = lty(r, u);
  char name[TXT];
  const char *res = NULL;
  if (op == IR_CAST || op == IR_BITCAST) {
    node s = u->src[0];
    const char *from = lty(r, s);
    const char *a = opnd(r, it->ops[0], from);
    enum ir_scalar fs = IR_DT_SCALAR(s->dt), ts = IR_DT_SCALAR(u->dt);
    if (op == IR_CAST) {
      res = convert(r, a, from, ir_scalar_is_signed(fs) || indexlike(s), fs == IR_DT_BOOL, rt,
                    ir_scalar_is_signed(ts) || indexlike(u), ts == IR_DT_BOOL);
    } else if (!strcmp(from, rt)) {
      res = a;
    } else if (indexlike(s) || indexlike(u)) {
      res = convert(r, a, from, true, false, rt, true, false);
    } else {
      snprintf(name, sizeof name, "%%v%u", fresh(r));
      emit(r, "%s = bitcast %s %s to %s", name, from, a, rt);
      res = name;
    }
  } else if (op == IR_THREEFRY) {
    const char *a = opnd(r, it->ops[0], "i64"), *b = opnd(r, it->ops[1], "i64");
    snprintf(name, sizeof name, "%%v%u", fresh(r));
    emit(r, "%s = call i64 @bg_threefry2x32(i64 %s, i64 %s)", name, a, b);
    r->threefry = true;
    res = name;
  } else if (math_index(op) >= 0) {
    bool f64 = !strcmp(rt, "double");
    if (strcmp(rt, "float") && !f64) {
      fail_node(r, u, "math op on a type other than float32/float64");
      return;
    }
    int mi = math_index(op);
    const char *fn = r->tg->math[mi][f64];
    if (!fn) {
      char what[128];
      snprintf(what, sizeof what, "float64 %s is not supported on this target (PTX has only float32 ex2/lg2/sin)",
               mi == 0 ? "exp2" : mi == 1 ? "log2" : "sin");
      fail_node(r, u, what);
      return;
    }
    r->intrinsics |= 1u << (mi * 2 + f64);
    const char *a = opnd(r, it->ops[0], rt);
    snprintf(name, sizeof name, "%%v%u", fresh(r));
    emit(r, "%s = call %s @%s(%s %s)", name, rt, fn, rt, a);
    res = name;
  } else if (op == IR_NEG) {
    const char *a = opnd(r, it->ops[0], rt);
    snprintf(name, sizeof name, "%%v%u", fresh(r));
    if (is_float_ty(rt)) emit(r, "%s = fneg %s %s", name, rt, a);
    else emit(r, "%s = sub %s 0, %s", name, rt, a);
    res = name;
  } else if (op == IR_RECIP) {
    const char *a = opnd(r, it->ops[0], rt);
    char one[48];
    lit_float(one, sizeof one, 1.0, rt);
    snprintf(name, sizeof name, "%%v%u", fresh(r));
    emit(r, "%s = fdiv %s %s, %s", name, rt, one, a);
    res = name;
  } else if (op == IR_WHERE) {
    const char *ty = compute_ty(r, u, 1, 2);
    const char *c = opnd(r, it->ops[0], "i1"), *a = opnd(r, it->ops[1], ty), *b = opnd(r, it->ops[2], ty);
    snprintf(name, sizeof name, "%%v%u", fresh(r));
    emit(r, "%s = select i1 %s, %s %s, %s %s", name, c, ty, a, ty, b);
    res = convert(r, name, ty, true, false, rt, true, false);
  } else if (op == IR_MULACC) {
    const char *ty = compute_ty(r, u, 0, 3);
    const char *a = opnd(r, it->ops[0], ty), *b = opnd(r, it->ops[1], ty), *c = opnd(r, it->ops[2], ty);
    enum ir_scalar sc = IR_DT_SCALAR(u->dt);
    if (fma_type(r, ty)) {
      res = emit_fma(r, ty, a, b, c);
    } else {
      char m[TXT];
      snprintf(m, sizeof m, "%s", alu2(r, IR_MUL, ty, sc, a, b, NULL));
      res = convert(r, alu2(r, IR_ADD, ty, sc, m, c, NULL), ty, true, false, rt, true, false);
    }
  } else if (u->nsrc == 2) {
    const char *ty = compute_ty(r, u, 0, 2);
    enum ir_scalar sc = indexlike(u->src[0]) ? IR_DT_INDEX : IR_DT_SCALAR(u->src[0]->dt);
    const char *a = opnd(r, it->ops[0], ty), *b = opnd(r, it->ops[1], ty);
    res = alu2(r, op, ty, sc, a, b, u->src[1]);
    const char *out_ty = (op == IR_CMPLT || op == IR_CMPNE || op == IR_CMPEQ) ? "i1" : ty;
    res = convert(r, res, out_ty, true, false, rt, true, false);
  } else {
    fail_node(r, u, "no LLVM form for this op");
    return;
  }
  if (IR_DT_SCALAR(u->dt) != IR_DT_INDEX && op != IR_CAST && op != IR_BITCAST) r->flops += it->scope->iters;
  set_text(r, it, res);
}

/* ---- memory ---- */

static const char *address(rctx *r, kitem *it) {
  node idx = it->u->src[0];
  long long slot = (long long)idx->src[0]->arg.i;
  enum ir_scalar s = IR_DT_SCALAR(idx->src[0]->dt);
  const char *ity = lty(r, idx->src[1]);
  const char *i = opnd(r, it->ops[0], ity);
  char *p = ring(r);
  snprintf(p, TXT, "%%p%u", fresh(r));
  emit(r, "%s = getelementptr inbounds %s, %s %%data%lld, %s %s", p, mem_ty(s), r->gptr, slot, ity, i);
  return p;
}

/* Elements the index x moves per step of range rng when x is an affine sum of it (rng, rng*c, c*rng, sums of
 * such terms and terms free of rng); 0 when x does not use rng; INT64_MIN when it is not affine in it. */
static int64_t range_stride(node x, node rng, unsigned depth) {
  int64_t c;
  if (x == rng) return 1;
  if (depth > 16 || x->op == IR_CONST || x->op == IR_DEFINE_VAR || x->op == IR_RANGE) return 0 * depth;
  if (x->op == IR_ADD && x->nsrc == 2) {
    int64_t a = range_stride(x->src[0], rng, depth + 1), b = range_stride(x->src[1], rng, depth + 1);
    return a == INT64_MIN || b == INT64_MIN ? INT64_MIN : a + b;
  }
  if (x->op == IR_MUL && x->nsrc == 2 && (ir_is_const(x->src[1], &c) || ir_is_const(x->src[0], &c))) {
    int64_t a = range_stride(ir_is_const(x->src[1], &c) ? x->src[0] : x->src[1], rng, depth + 1);
    return a == INT64_MIN || c > (1 << 24) || c < -(1 << 24) || a > (1 << 24) || a < -(1 << 24) ? (a ? INT64_MIN : 0) : a * c;
  }
  for (unsigned i = 0; i < x->nsrc; i++)
    if (range_stride(x->src[i], rng, depth + 1)) return INT64_MIN;
  return 0;
}

/* The host's hardware prefetchers follow streams within a 4 KiB page: a load in the innermost reduce loop that
 * jumps by a row each step (the right-hand matrix of a matmul, K rows of N floats) misses on every step. It
 * is prefetched KLLVM_PREFETCH_AHEAD steps ahead (a prefetch never faults, so the address may run past the
 * buffer). */
enum { KLLVM_PREFETCH_AHEAD = 16, KLLVM_PREFETCH_MIN_BYTES = 512 };
static void prefetch_ahead(rctx *r, kitem *it, const char *p) {
  const kscope *sc = it->scope;
  if (!r->cpu || !sc || !sc->loop || kr_kind(sc->loop->u) != KR_REDUCE) return;
  node idx = it->u->src[0];
  unsigned es = ir_scalar_size(IR_DT_SCALAR(idx->src[0]->dt));
  int64_t st = range_stride(idx->src[1], sc->loop->u, 0);
  if (st == INT64_MIN || st * (int64_t)es < KLLVM_PREFETCH_MIN_BYTES) return;
  /* one prefetch per cache line: the copies of an upcast differ from each other by a constant term */
  node base = idx->src[1];
  int64_t off = 0;
  if (base->op == IR_ADD && base->nsrc == 2 && ir_is_const(base->src[1], &off)) base = base->src[0];
  for (unsigned i = 0; i < r->npf; i++) {
    const struct pfline *q = &r->pf[i];
    if (q->scope == sc && q->buf == idx->src[0] && q->base == base && q->stride == st && (off - q->off) * (int64_t)es < 64 &&
        (q->off - off) * (int64_t)es < 64)
      return;
  }
  if (r->npf < sizeof r->pf / sizeof r->pf[0]) r->pf[r->npf++] = (struct pfline){sc, idx->src[0], base, st, off};
  unsigned n = fresh(r);
  emit(r, "%%pf%u = getelementptr i8, ptr %s, i64 %lld", n, p, (long long)(st * (int64_t)es * KLLVM_PREFETCH_AHEAD));
  emit(r, "call void @llvm.prefetch.p0(ptr %%pf%u, i32 0, i32 3, i32 1)", n);
  r->prefetch = true;
}

static void render_load(rctx *r, kitem *it) {
  node u = it->u;
  enum ir_scalar s = IR_DT_SCALAR(u->dt);
  const char *mt = mem_ty(s), *rt = lty(r, u);
  unsigned al = ir_scalar_size(s);
  char from[64], val[TXT], res[TXT];
  unsigned b = r->nblocks++;
  if (it->ops[1]) {
    const char *valid = opnd(r, it->ops[1], "i1");
    snprintf(from, sizeof from, "%s", r->cur);
    emit(r, "br i1 %s, label %%ld%u, label %%ld%u.end", valid, b, b);
    char l[32];
    snprintf(l, sizeof l, "ld%u", b);
    label(r, l);
  }
  const char *p = address(r, it);
  prefetch_ahead(r, it, p);
  snprintf(val, sizeof val, "%%v%u", fresh(r));
  emit(r, "%s = load %s, %s %s, align %u", val, mt, r->gptr, p, al);
  if (s == IR_DT_BOOL) {
    char t[TXT];
    snprintf(t, sizeof t, "%%v%u", fresh(r));
    emit(r, "%s = icmp ne i8 %s, 0", t, val);
    snprintf(val, sizeof val, "%s", t);
  }
  if (!it->ops[1]) {
    set_text(r, it, val);
    return;
  }
  char here[64], l[40];
  snprintf(here, sizeof here, "%s", r->cur);
  emit(r, "br label %%ld%u.end", b);
  snprintf(l, sizeof l, "ld%u.end", b);
  label(r, l);
  snprintf(res, sizeof res, "%%v%u", fresh(r));
  emit(r, "%s = phi %s [ %s, %%%s ], [ %s, %%%s ]", res, rt, val, here, zero_of(r, rt), from);
  set_text(r, it, res);
}

static void render_store(rctx *r, kitem *it) {
  node u = it->u;
  node vnode = u->src[1];
  enum ir_scalar s = IR_DT_SCALAR(u->src[0]->src[0]->dt);
  unsigned b = r->nblocks++;
  bool gate = it->ops[1] || r->group;
  if (gate) {
    /* a work-group reduce leaves its result in every group thread: thread 0 of the group stores */
    char valid[TXT];
    snprintf(valid, sizeof valid, "%s", r->group ? "%gl.first" : "");
    if (it->ops[1] && r->group) {
      snprintf(valid, sizeof valid, "%%v%u", fresh(r));
      emit(r, "%s = and i1 %%gl.first, %s", valid, opnd(r, it->ops[1], "i1"));
    } else if (it->ops[1]) {
      snprintf(valid, sizeof valid, "%s", opnd(r, it->ops[1], "i1"));
    }
    emit(r, "br i1 %s, label %%st%u, label %%st%u.end", valid, b, b);
    char l[32];
    snprintf(l, sizeof l, "st%u", b);
    label(r, l);
  }
  const char *v = opnd(r, it->ops[2], lty(r, vnode));
  char vv[TXT];
  snprintf(vv, sizeof vv, "%s", v);
  if (s == IR_DT_BOOL) {
    snprintf(vv, sizeof vv, "%%v%u", fresh(r));
    emit(r, "%s = zext i1 %s to i8", vv, v);
  }
  const char *p = address(r, it);
  emit(r, "store %s %s, %s %s, align %u", mem_ty(s), vv, r->gptr, p, ir_scalar_size(s));
  if (gate) {
    char l[32];
    emit(r, "br label %%st%u.end", b);
    snprintf(l, sizeof l, "st%u.end", b);
    label(r, l);
  }
}

/* ---- accumulators ---- */

static void identity(rctx *r, char *b, size_t n, int64_t op, enum ir_scalar s, const char *ty) {
  if (ir_scalar_is_float(s)) {
    lit_float(b, n, op == IR_MAX ? -INFINITY : op == IR_MUL ? 1.0 : 0.0, ty);
    return;
  }
  int64_t v = op == IR_MUL;
  if (op == IR_MAX && ir_scalar_is_signed(s))
    v = s == IR_DT_INT8 ? INT8_MIN : s == IR_DT_INT16 ? INT16_MIN : s == IR_DT_INT32 ? INT32_MIN : INT64_MIN;
  (void)r;
  lit_int(b, n, v, ty);
}

static void render_acc(rctx *r, kitem *it) {
  node u = it->u;
  const char *ty = lty(r, u);
  char name[32], id[64];
  snprintf(name, sizeof name, "%%acc%u", r->nacc++);
  unsigned align = !is_float_ty(ty) ? (int_bits(ty) + 7) / 8 : !strcmp(ty, "double") ? 8u : !strcmp(ty, "float") ? 4u : 2u;
  kstr_printf(&r->pro, "  %s = alloca %s, align %u%s\n", name, ty, align, r->tg->alloca_as);
  identity(r, id, sizeof id, u->arg.i, IR_DT_SCALAR(u->dt), ty);
  emit(r, "store %s %s, %s %s", ty, id, r->pptr, name);
  set_text(r, it, name);
}

static void render_update(rctx *r, kitem *it) {
  node u = it->u;
  const char *ty = lty(r, u);
  enum ir_scalar sc = IR_DT_SCALAR(u->dt);
  const char *acc = it->ops[0]->text;
  for (unsigned i = 1; i < it->nops && !r->err; i++) {
    char cur[TXT];
    snprintf(cur, sizeof cur, "%%v%u", fresh(r));
    emit(r, "%s = load %s, %s %s", cur, ty, r->pptr, acc);
    kitem *ln = it->ops[i];
    const char *nv;
    if (u->arg.i == IR_ADD && fma_type(r, ty) && ln->kind == KI_EXPR && ln->u->op == IR_MUL && ln->nops == 2 &&
        !strcmp(lty(r, ln->u), ty)) {   /* acc + a*b: one FMA (the product's fmul is left dead) */
      char a[TXT];
      snprintf(a, sizeof a, "%s", opnd(r, ln->ops[0], ty));
      nv = emit_fma(r, ty, a, opnd(r, ln->ops[1], ty), cur);
    } else {
      char lane[TXT];
      snprintf(lane, sizeof lane, "%s", opnd(r, ln, ty));
      nv = alu2(r, (enum ir_op)u->arg.i, ty, sc, cur, lane, NULL);
    }
    emit(r, "store %s %s, %s %s", ty, nv, r->pptr, acc);
    r->flops += it->scope->iters;
  }
}

/* ---- launch dims ---- */

static const mapped *mapping(const rctx *r, const kitem *loop) {
  for (unsigned i = 0; i < r->nmap; i++)
    if (r->map[i].loop == loop) return &r->map[i];
  return NULL;
}

/* The output loop of a scope (the chain klinearize opens outermost first), or NULL. */
static kitem *output_loop(const kscope *s) {
  for (kitem *it = s->first; it; it = it->next)
    if (it->kind == KI_LOOP && kr_kind(it->u) == KR_LOOP) return it;
  return NULL;
}

static uint32_t largest_divisor_upto(int64_t e, uint32_t cap) {
  for (uint32_t d = cap; d > 1; d--)
    if (e % d == 0) return d;
  return 1;
}

static void plan_grid(rctx *r, klin *l, uint32_t gsz[3], uint32_t lsz[3]) {
  kitem *chain[KMAX_RANGES];
  unsigned n = 0;
  for (kitem *it = output_loop(l->root); it && n < KMAX_RANGES; it = output_loop(it->body)) chain[n++] = it;
  for (int d = 0; d < 3; d++) gsz[d] = lsz[d] = 1;
  unsigned ng = 0, nl = 0, threads = 1;
  if (r->tile == KR_TC) {   /* WMMA / MFMA: one wave per 16 x 16 output tile: columns -> gsz x, rows -> gsz y */
    int64_t e[2];
    if (n != 2 || !ir_is_const(chain[0]->u->src[0], &e[0]) || !ir_is_const(chain[1]->u->src[0], &e[1]) || e[0] % 16 ||
        e[1] % 16) {
      if (!r->err) r->err = bg_error(BG_EINVAL, "kernel: llvm render: tc needs 2 output axes 16 divides");
      return;
    }
    if (!r->tcs) {
      if (!r->err) r->err = bg_error(BG_ENOTSUP, "kernel: llvm render: tc on a processor without a tensor-core form");
      return;
    }
    lsz[0] = r->tcs->wave;
    gsz[0] = (uint32_t)(e[1] / 16);
    gsz[1] = (uint32_t)(e[0] / 16);
    r->tile_row = chain[0];
    r->tile_col = chain[1];
    return;
  }
  if (r->tile) {   /* tiled GEMM: columns x = T threads x N/T groups, rows y alike */
    int64_t e[2];
    if (n != 2 || !ir_is_const(chain[0]->u->src[0], &e[0]) || !ir_is_const(chain[1]->u->src[0], &e[1]) || e[0] % r->tile ||
        e[1] % r->tile) {
      if (!r->err) r->err = bg_error(BG_EINVAL, "kernel: llvm render: tile %u needs 2 output axes it divides", r->tile);
      return;
    }
    for (unsigned i = 0; i < 2; i++) {
      unsigned d = 1 - i;   /* chain[1] (innermost, columns) -> x */
      r->map[r->nmap++] = (mapped){.loop = chain[i], .gdim = e[i] > r->tile ? (int)d : -1, .ldim = (int)d, .l = r->tile};
      lsz[d] = r->tile;
      gsz[d] = (uint32_t)(e[i] / r->tile);
    }
    r->tile_row = chain[0];
    r->tile_col = chain[1];
    return;
  }
  if (r->group) {   /* the group's threads are local dim x */
    lsz[nl++] = r->group;
    threads = r->group;
  }
  for (unsigned i = n; i-- > 0 && r->nmap < MAX_MAPPED;) {
    int64_t e;
    if (!ir_is_const(chain[i]->u->src[0], &e) || e < 1 || e > INT32_MAX) break;   /* symbolic: a loop from here out */
    uint32_t lp = nl < 3 ? largest_divisor_upto(e, KLLVM_MAX_LOCAL / threads) : 1;
    uint32_t g = (uint32_t)(e / lp);
    if (g > 1 && ng == 3) break;   /* out of global dims: the rest stay loops */
    mapped m = {.loop = chain[i], .gdim = -1, .ldim = -1, .l = lp};
    if (lp > 1) {
      m.ldim = (int)nl;
      lsz[nl++] = lp;
      threads *= lp;
    }
    if (g > 1) {
      m.gdim = (int)ng;
      gsz[ng++] = g;
    }
    r->map[r->nmap++] = m;
  }
}

static void emit_ids(rctx *r, const uint32_t gsz[3], const uint32_t lsz[3]) {
  static const char xyz[] = "xyz";
  if (r->cpu) return;   /* buffers, variables and gid.x are the body's parameters */
  if (r->host) {   /* the arguments from the CPU-style block, ids are parameters */
    for (unsigned i = 0; i < r->info->nbufs; i++)
      kstr_printf(&r->pro, "  %%data%u.p = getelementptr i8, ptr %%args, i64 %u\n  %%data%u = load ptr, ptr %%data%u.p\n", i, 8 * i,
                  i, i);
    for (unsigned i = 0; i < r->info->nvars; i++)
      kstr_printf(&r->pro, "  %%var%u.p = getelementptr i8, ptr %%args, i64 %u\n  %%var%u = load i32, ptr %%var%u.p\n", i,
                  8 * r->info->nbufs + 4 * i, i, i);
    return;
  }
  char fn[64];
  for (int d = 0; d < 3; d++) {
    if (gsz[d] > 1) {
      snprintf(fn, sizeof fn, "%s%c", r->tg->group_id, xyz[d]);
      kstr_printf(&r->pro, "  %%gid.%c = call i32 @%s()\n", xyz[d], fn);
    }
    if (lsz[d] > 1) {
      snprintf(fn, sizeof fn, "%s%c", r->tg->local_id, xyz[d]);
      kstr_printf(&r->pro, "  %%lid.%c = call i32 @%s()\n", xyz[d], fn);
    }
  }
}

/* ---- scopes ---- */

static void render_scope(rctx *r, kscope *sc);

static void barrier(rctx *r) {
  /* LDS writes visible to the work-group, then every wave waits (LLVM AMDGPUUsage memory model: a
   * workgroup-scope release/acquire fence around s_barrier; tinygrad's AMD renderer emits the same) */
  emit(r, "fence syncscope(\"workgroup\") release");
  emit(r, "call void @llvm.amdgcn.s.barrier()");
  emit(r, "fence syncscope(\"workgroup\") acquire");
  r->barrier = true;
}

enum { MAX_GROUP_ACC = 64 };

/* Accumulators finished by the group loop it: an UPDATE in its body whose ACC sits beside the loop. */
static unsigned group_accs(const kscope *body, const kscope *home, kitem **acc, unsigned n) {
  for (kitem *x = body->first; x; x = x->next) {
    if (x->kind == KI_LOOP) n = group_accs(x->body, home, acc, n);
    if (x->kind != KI_UPDATE || x->ops[0]->scope != home) continue;
    bool seen = false;
    for (unsigned i = 0; i < n && !seen; i++) seen = acc[i] == x->ops[0];
    if (!seen && n < MAX_GROUP_ACC + 1) acc[n++] = x->ops[0];
  }
  return n;
}

/* After the group loop: each thread's partials to LDS (slot = flat local id), barrier, every thread
 * combines the group's partials in thread order (all end with the same value; thread 0 stores),
 * barrier again so a repeated loop cannot overwrite slots still being read. */
static void group_combine(rctx *r, kitem *loop) {
  kitem *acc[MAX_GROUP_ACC + 1];
  unsigned n = group_accs(loop->body, loop->scope, acc, 0);
  if (n > MAX_GROUP_ACC) {
    fail_node(r, loop->u, "work-group reduce of more than 64 accumulators");
    return;
  }
  if (!n) return;
  unsigned lds0 = r->nlds;
  for (unsigned k = 0; k < n; k++) {
    const char *ty = lty(r, acc[k]->u);
    unsigned id = r->nlds++, v = fresh(r), p = fresh(r);
    kstr_printf(&r->glob, "@lds%u = internal addrspace(3) global [%u x %s] poison, align 16\n", id, r->threads, ty);
    emit(r, "%%v%u = load %s, %s %s", v, ty, r->pptr, acc[k]->text);
    emit(r, "%%v%u = getelementptr inbounds [%u x %s], ptr addrspace(3) @lds%u, i32 0, i32 %%gl.slot", p, r->threads, ty, id);
    emit(r, "store %s %%v%u, ptr addrspace(3) %%v%u", ty, v, p);
  }
  barrier(r);
  for (unsigned k = 0; k < n; k++) {
    char id[64];
    const char *ty = lty(r, acc[k]->u);
    identity(r, id, sizeof id, acc[k]->u->arg.i, IR_DT_SCALAR(acc[k]->u->dt), ty);
    emit(r, "store %s %s, %s %s", ty, id, r->pptr, acc[k]->text);
  }
  unsigned g = r->nloops++;
  char l[40], from[64];
  snprintf(from, sizeof from, "%s", r->cur);
  emit(r, "br label %%G%u.head", g);
  snprintf(l, sizeof l, "G%u.head", g);
  label(r, l);
  emit(r, "%%gj%u = phi i32 [ 0, %%%s ], [ %%gj%u.next, %%G%u.body ]", g, from, g, g);
  emit(r, "%%gj%u.c = icmp ult i32 %%gj%u, %u", g, g, r->group);
  emit(r, "br i1 %%gj%u.c, label %%G%u.body, label %%G%u.exit", g, g, g);
  snprintf(l, sizeof l, "G%u.body", g);
  label(r, l);
  emit(r, "%%gj%u.i = add i32 %%gl.base, %%gj%u", g, g);
  for (unsigned k = 0; k < n && !r->err; k++) {
    const char *ty = lty(r, acc[k]->u);
    unsigned p = fresh(r), x = fresh(r), c = fresh(r);
    emit(r, "%%v%u = getelementptr inbounds [%u x %s], ptr addrspace(3) @lds%u, i32 0, i32 %%gj%u.i", p, r->threads, ty,
         lds0 + k, g);
    emit(r, "%%v%u = load %s, ptr addrspace(3) %%v%u", x, ty, p);
    emit(r, "%%v%u = load %s, %s %s", c, ty, r->pptr, acc[k]->text);
    char a[TXT], b[TXT];
    snprintf(a, sizeof a, "%%v%u", c);
    snprintf(b, sizeof b, "%%v%u", x);
    const char *nv = alu2(r, (enum ir_op)acc[k]->u->arg.i, ty, IR_DT_SCALAR(acc[k]->u->dt), a, b, NULL);
    emit(r, "store %s %s, %s %s", ty, nv, r->pptr, acc[k]->text);
  }
  emit(r, "%%gj%u.next = add nuw i32 %%gj%u, 1", g, g);
  emit(r, "br label %%G%u.head", g);
  snprintf(l, sizeof l, "G%u.exit", g);
  label(r, l);
  barrier(r);
}

/* ---- local tiles ---- */

static bool tile_op(const ir_node *u) {
  switch (u->op) {
  case IR_CONST: case IR_CAST: case IR_ADD: case IR_SUB: case IR_MUL: case IR_MAX: case IR_NEG: return true;
  default: return false;
  }
}

static int tile_walk(const ir_node *u, const ir_node *ld[2], unsigned *n, int depth) {
  if (depth > 32) return -1;
  if (u->op == IR_LOAD) {
    if ((*n >= 1 && ld[0] == u) || (*n == 2 && ld[1] == u)) return 0;
    if (*n == 2 || u->src[0]->nsrc != 2 || IR_DT_SCALAR(u->dt) == IR_DT_BOOL) return -1;
    ld[(*n)++] = u;
    return 0;
  }
  if (!tile_op(u)) return -1;
  for (unsigned i = 0; i < u->nsrc; i++)
    if (tile_walk(u->src[i], ld, n, depth + 1)) return -1;
  return 0;
}

/* 1: the index of load l depends on red and other (and no other range), 0 otherwise, -1 on error. */
static int tile_dep(ir_ctx *ctx, const ir_node *l, const ir_node *red, const ir_node *other) {
  const ir_node *rs[KMAX_RANGES];
  int n = kcollect_ranges(ctx, l->src[0]->src[1], rs, KMAX_RANGES);
  if (n < 0) return -1;
  bool has_red = false, has_other = false;
  for (int i = 0; i < n; i++) {
    if (rs[i] == red) has_red = true;
    else if (rs[i] == other) has_other = true;
    else return 0;
  }
  return has_red && has_other;
}

static const ir_node *strip_casts(const ir_node *u) {
  while (u->op == IR_CAST) u = u->src[0];
  return u;
}

int kllvm_tc_loads(ir_ctx *ctx, const ir_node *value, const ir_node *red, const ir_node *row, const ir_node *col,
                   const ir_node *ld[2], bool *bf) {
  const ir_node *v = strip_casts(value);
  if (v->op != IR_MUL || kllvm_tile_loads(ctx, value, red, row, col, ld)) return -1;
  if (strip_casts(v->src[0]) != ld[0] && strip_casts(v->src[0]) != ld[1]) return -1;
  if (strip_casts(v->src[1]) != ld[0] && strip_casts(v->src[1]) != ld[1]) return -1;
  enum ir_scalar a = IR_DT_SCALAR(ld[0]->dt), b = IR_DT_SCALAR(ld[1]->dt);
  if (a != b || (a != IR_DT_FLOAT16 && a != IR_DT_BFLOAT16)) return -1;
  for (const ir_node *c = value; c->op == IR_CAST; c = c->src[0])   /* the sum is float32 (or a wider cast of it) */
    if (!ir_scalar_is_float(IR_DT_SCALAR(c->dt))) return -1;
  *bf = a == IR_DT_BFLOAT16;
  return 0;
}

int kllvm_tile_loads(ir_ctx *ctx, const ir_node *value, const ir_node *red, const ir_node *row, const ir_node *col,
                     const ir_node *ld[2]) {
  unsigned n = 0;
  if (tile_walk(value, ld, &n, 0) || n != 2) return -1;
  if (tile_dep(ctx, ld[0], red, row) == 1 && tile_dep(ctx, ld[1], red, col) == 1) return 0;
  if (tile_dep(ctx, ld[1], red, row) == 1 && tile_dep(ctx, ld[0], red, col) == 1) {
    const ir_node *t = ld[0];
    ld[0] = ld[1];
    ld[1] = t;
    return 0;
  }
  return -1;
}

/* An index expression of type ty with the ranges in from[] replaced by the texts to[] (of type ty). */
static void tile_index(rctx *r, const ir_node *u, const ir_node *const from[2], const char *const to[2], const char *ty,
                       char *out, int depth) {
  for (int i = 0; i < 2; i++)
    if (u == from[i]) {
      snprintf(out, TXT, "%s", to[i]);
      return;
    }
  if (depth > 32) {
    fail_node(r, u, "tile: index too deep");
    return;
  }
  if (u->op == IR_CONST) {
    snprintf(out, TXT, "%s", lit_const(r, u, ty));
  } else if (u->op == IR_DEFINE_VAR) {
    char v[32];
    snprintf(v, sizeof v, "%%var%d", var_index(r, u));
    snprintf(out, TXT, "%s", convert(r, v, "i32", true, false, ty, true, false));
  } else if (u->nsrc == 2 && (u->op == IR_ADD || u->op == IR_MUL || u->op == IR_IDIV || u->op == IR_MOD)) {
    char a[TXT] = "", b[TXT] = "";
    tile_index(r, u->src[0], from, to, ty, a, depth + 1);
    tile_index(r, u->src[1], from, to, ty, b, depth + 1);
    snprintf(out, TXT, "%s", alu2(r, (enum ir_op)u->op, ty, IR_DT_INDEX, a, b, u->src[1]));
  } else {
    fail_node(r, u, "tile: index op outside add/mul/idiv/mod of ranges, variables and constants");
    snprintf(out, TXT, "0");
  }
}

/* The reduced value with its two loads replaced by the LDS values ldv[] (loads' own types). */
static void tile_value(rctx *r, const ir_node *u, const ir_node *const ld[2], const char *const ldv[2], char *out, int depth) {
  for (int i = 0; i < 2; i++)
    if (u == ld[i]) {
      snprintf(out, TXT, "%s", ldv[i]);
      return;
    }
  const char *rt = lty(r, u);
  if (u->op == IR_CONST) {
    snprintf(out, TXT, "%s", lit_const(r, u, rt));
    return;
  }
  char a[TXT] = "", b[TXT] = "";
  if (depth > 32 || !u->nsrc) {
    fail_node(r, u, "tile: value too deep");
    return;
  }
  tile_value(r, u->src[0], ld, ldv, a, depth + 1);
  if (u->nsrc > 1) tile_value(r, u->src[1], ld, ldv, b, depth + 1);
  enum ir_scalar fs = IR_DT_SCALAR(u->src[0]->dt), ts = IR_DT_SCALAR(u->dt);
  if (u->op == IR_CAST) {
    snprintf(out, TXT, "%s", convert(r, a, lty(r, u->src[0]), ir_scalar_is_signed(fs), fs == IR_DT_BOOL, rt,
                                     ir_scalar_is_signed(ts), ts == IR_DT_BOOL));
  } else if (u->op == IR_NEG) {
    snprintf(out, TXT, "%%v%u", fresh(r));
    if (is_float_ty(rt)) emit(r, "%s = fneg %s %s", out, rt, a);
    else emit(r, "%s = sub %s 0, %s", out, rt, a);
  } else {
    snprintf(out, TXT, "%s", alu2(r, (enum ir_op)u->op, rt, ts, a, b, u->src[1]));
  }
}

/* A counted loop `for (NAME = 0; NAME < ext; NAME++)` in i32: opens the body block. */
static void loop_open(rctx *r, unsigned n, const char *name, uint32_t ext) {
  char l[40], from[64];
  snprintf(from, sizeof from, "%s", r->cur);
  emit(r, "br label %%T%u.head", n);
  snprintf(l, sizeof l, "T%u.head", n);
  label(r, l);
  emit(r, "%s = phi i32 [ 0, %%%s ], [ %s.next, %%T%u.latch ]", name, from, name, n);
  emit(r, "%s.c = icmp ult i32 %s, %u", name, name, ext);
  emit(r, "br i1 %s.c, label %%T%u.body, label %%T%u.exit", name, n, n);
  snprintf(l, sizeof l, "T%u.body", n);
  label(r, l);
}

static void loop_close(rctx *r, unsigned n, const char *name) {
  char l[40];
  emit(r, "br label %%T%u.latch", n);
  snprintf(l, sizeof l, "T%u.latch", n);
  label(r, l);
  emit(r, "%s.next = add nuw i32 %s, 1", name, name);
  emit(r, "br label %%T%u.head", n);
  snprintf(l, sizeof l, "T%u.exit", n);
  label(r, l);
}

/* The tiled GEMM in place of the reduce loop it (classic shared-memory tiling): per step of T along
 * the reduce, thread (x, y) copies A[row, k0 + x] and B[k0 + y, col] into LDS tiles, barrier, then
 * accumulates over the T staged values in reduce order (the same order as the plain loop, so the
 * result is bit-identical), barrier before the next step overwrites the tiles. */
static void render_tile_loop(rctx *r, kitem *it) {
  kitem *acc[MAX_GROUP_ACC + 1];
  unsigned na = group_accs(it->body, it->scope, acc, 0);
  int64_t ext;
  if (na != 1 || acc[0]->u->arg.i != IR_ADD || acc[0]->u->nsrc != 2 || !r->tile_row || !ir_is_const(it->u->src[0], &ext) ||
      ext % r->tile) {
    fail_node(r, it->u, "tile: the reduce loop is not one sum of a matmul");
    return;
  }
  const ir_node *ld[2];
  if (kllvm_tile_loads(r->ctx, acc[0]->u->src[0], it->u, r->tile_row->u, r->tile_col->u, ld)) {
    fail_node(r, acc[0]->u->src[0], "tile: not a product of a (row, k) load and a (k, column) load");
    return;
  }
  unsigned T = r->tile, base = r->nlds;
  r->nlds += 2;
  const char *mt[2];
  for (int i = 0; i < 2; i++) {
    mt[i] = mem_ty(IR_DT_SCALAR(ld[i]->dt));
    kstr_printf(&r->glob, "@lds%u = internal addrspace(3) global [%u x %s] poison, align 16\n", base + i, T * T, mt[i]);
  }
  unsigned n = r->nloops++, m = r->nloops++;
  char k0[32], kk[32], kx[TXT], ky[TXT], slot[TXT];
  snprintf(k0, sizeof k0, "%%tk%u", n);
  snprintf(kk, sizeof kk, "%%tk%u", m);
  snprintf(slot, sizeof slot, "%%v%u", fresh(r));
  emit(r, "%s.y = mul i32 %%lid.y, %u", slot, T);
  emit(r, "%s = add i32 %s.y, %%lid.x", slot, slot);
  loop_open(r, n, k0, (uint32_t)(ext / T));
  snprintf(kx, sizeof kx, "%%v%u", fresh(r));
  emit(r, "%s.b = mul i32 %s, %u", kx, k0, T);
  emit(r, "%s = add i32 %s.b, %%lid.x", kx, kx);
  snprintf(ky, sizeof ky, "%%v%u", fresh(r));
  emit(r, "%s = add i32 %s.b, %%lid.y", ky, kx);
  /* A[row, k0 + x] -> tile A[y][x]; B[k0 + y, col] -> tile B[y][x] */
  for (int i = 0; i < 2 && !r->err; i++) {
    const ir_node *index = ld[i]->src[0], *other = i ? r->tile_col->u : r->tile_row->u;
    const char *ity = lty(r, index->src[1]);
    const ir_node *from[2] = {it->u, other};
    char kv[TXT], ov[TXT], idx[TXT] = "";
    snprintf(kv, sizeof kv, "%s", convert(r, i ? ky : kx, "i32", true, false, ity, true, false));
    snprintf(ov, sizeof ov, "%s", convert(r, (i ? r->tile_col : r->tile_row)->text, lty(r, other), true, false, ity, true,
                                          false));
    const char *to[2] = {kv, ov};
    tile_index(r, index->src[1], from, to, ity, idx, 0);
    unsigned p = fresh(r), v = fresh(r), q = fresh(r);
    emit(r, "%%p%u = getelementptr inbounds %s, %s %%data%lld, %s %s", p, mt[i], r->gptr, (long long)index->src[0]->arg.i, ity,
         idx);
    emit(r, "%%v%u = load %s, %s %%p%u, align %u", v, mt[i], r->gptr, p, ir_scalar_size(IR_DT_SCALAR(ld[i]->dt)));
    emit(r, "%%v%u = getelementptr inbounds [%u x %s], ptr addrspace(3) @lds%u, i32 0, i32 %s", q, T * T, mt[i], base + i,
         slot);
    emit(r, "store %s %%v%u, ptr addrspace(3) %%v%u", mt[i], v, q);
  }
  barrier(r);
  loop_open(r, m, kk, T);
  char ldv[2][TXT];
  for (int i = 0; i < 2; i++) {   /* A tile [y][kk], B tile [kk][x] */
    unsigned a = fresh(r), p = fresh(r), v = fresh(r);
    emit(r, "%%v%u = mul i32 %s, %u", a, i ? kk : "%lid.y", T);
    emit(r, "%%v%u.i = add i32 %%v%u, %s", a, a, i ? "%lid.x" : kk);
    emit(r, "%%v%u = getelementptr inbounds [%u x %s], ptr addrspace(3) @lds%u, i32 0, i32 %%v%u.i", p, T * T, mt[i], base + i,
         a);
    emit(r, "%%v%u = load %s, ptr addrspace(3) %%v%u", v, mt[i], p);
    snprintf(ldv[i], TXT, "%%v%u", v);
  }
  const char *ldp[2] = {ldv[0], ldv[1]};
  char val[TXT] = "";
  tile_value(r, acc[0]->u->src[0], ld, ldp, val, 0);
  const char *ty = lty(r, acc[0]->u);
  unsigned c = fresh(r);
  emit(r, "%%v%u = load %s, %s %s", c, ty, r->pptr, acc[0]->text);
  char cur[TXT];
  snprintf(cur, sizeof cur, "%%v%u", c);
  const char *nv = alu2(r, IR_ADD, ty, IR_DT_SCALAR(acc[0]->u->dt), cur, val, NULL);
  emit(r, "store %s %s, %s %s", ty, nv, r->pptr, acc[0]->text);
  r->flops += 2 * it->scope->iters * (uint64_t)ext;
  loop_close(r, m, kk);
  barrier(r);
  loop_close(r, n, k0);
}

/* ---- tensor cores: WMMA (RDNA3, RDNA4), MFMA (CDNA3) ---- */

/* The intrinsic call of form f on A and B vectors of n elements of et and the accumulator c (<nacc x float>). */
static void tc_call(rctx *r, unsigned d, bool bf, const char *et, unsigned n, const char *a, const char *b, unsigned c) {
  const ktc_shape *t = r->tcs;
  if (r->tcf == KTC_CDNA3_MFMA)   /* cbsz, abid, blgp 0: no broadcast */
    emit(r, "%%v%u = call <4 x float> @llvm.amdgcn.mfma.f32.16x16x16%s(<4 x %s> %s, <4 x %s> %s, <4 x float> %%v%u, i32 0, "
         "i32 0, i32 0)", d, bf ? "bf16.1k" : "f16", et, a, et, b, c);
  else if (r->tcf == KTC_RDNA4_WMMA)
    emit(r, "%%v%u = call <8 x float> @llvm.amdgcn.wmma.f32.16x16x16.%s.v8f32.v8%s(<8 x %s> %s, <8 x %s> %s, <8 x float> %%v%u)",
         d, bf ? "bf16" : "f16", bf ? "i16" : "f16", et, a, et, b, c);
  else
    emit(r, "%%v%u = call <%u x float> @llvm.amdgcn.wmma.f32.16x16x16.%s(<%u x %s> %s, <%u x %s> %s, <%u x float> %%v%u)", d,
         t->nacc, bf ? "bf16" : "f16", n, et, a, n, et, b, t->nacc, c);
}

/* The declarations of the matrix intrinsics the kernel calls (r->wmma: bit 0 f16, bit 1 bf16). */
static void tc_declare(const rctx *r, kstr *out) {
  for (unsigned bf = 0; bf < 2; bf++) {
    if (!((r->wmma >> bf) & 1)) continue;
    const char *et = bf ? "i16" : "half";
    if (r->tcf == KTC_CDNA3_MFMA)
      kstr_printf(out, "declare <4 x float> @llvm.amdgcn.mfma.f32.16x16x16%s(<4 x %s>, <4 x %s>, <4 x float>, i32, i32, i32)\n",
                  bf ? "bf16.1k" : "f16", et, et);
    else if (r->tcf == KTC_RDNA4_WMMA)
      kstr_printf(out, "declare <8 x float> @llvm.amdgcn.wmma.f32.16x16x16.%s.v8f32.v8%s(<8 x %s>, <8 x %s>, <8 x float>)\n",
                  bf ? "bf16" : "f16", bf ? "i16" : "f16", et, et);
    else
      kstr_printf(out, "declare <8 x float> @llvm.amdgcn.wmma.f32.16x16x16.%s(<16 x %s>, <16 x %s>, <8 x float>)\n",
                  bf ? "bf16" : "f16", et, et);
  }
}

/* The reduce loop `loop` as matrix steps of 16 along k, then the stores after it in its scope, once per
 * accumulator element, in the lane layout of the processor's form (ktc.h): lane l loads k_per_lane elements of
 * A row l%16 and of B column l%16 from k = 16 * step + k_lane_step * (l/16); accumulator element i is
 * D[row_mul * i + row_hi * (l/16)][l%16]. */
static void render_tc(rctx *r, kitem *loop) {
  kitem *acc[MAX_GROUP_ACC + 1];
  unsigned na = group_accs(loop->body, loop->scope, acc, 0);
  int64_t ext;
  const ir_node *ld[2];
  bool bf = false;
  if (na != 1 || acc[0]->u->arg.i != IR_ADD || acc[0]->u->nsrc != 2 || !ir_is_const(loop->u->src[0], &ext) || ext % 16 ||
      kllvm_tc_loads(r->ctx, acc[0]->u->src[0], loop->u, r->tile_row->u, r->tile_col->u, ld, &bf)) {
    fail_node(r, loop->u, "tc: the reduce loop is not one float sum of a float16/bfloat16 matmul");
    return;
  }
  const ktc_shape *t = r->tcs;
  const char *et = bf ? "i16" : "half";
  unsigned nk = t->k_per_lane, nacc = t->nacc;
  r->wmma |= bf ? 2u : 1u;
  unsigned w = r->nacc++;
  kstr_printf(&r->pro, "  %%tcw%u = alloca <%u x float>, align 32%s\n", w, nacc, r->tg->alloca_as);
  emit(r, "store <%u x float> zeroinitializer, %s %%tcw%u", nacc, r->pptr, w);
  unsigned n = r->nloops++;
  char k0[32];
  snprintf(k0, sizeof k0, "%%tk%u", n);
  loop_open(r, n, k0, (uint32_t)(ext / 16));
  char vec[2][TXT];
  for (int i = 0; i < 2 && !r->err; i++) {   /* A: row l%16, k0*16 + koff + e; B: k0*16 + koff + e, column l%16 */
    const ir_node *index = ld[i]->src[0], *other = i ? r->tile_col->u : r->tile_row->u;
    const char *ity = lty(r, index->src[1]), *mt = mem_ty(IR_DT_SCALAR(ld[i]->dt));
    const ir_node *from[2] = {loop->u, other};
    snprintf(vec[i], TXT, "undef");
    for (unsigned e = 0; e < nk && !r->err; e++) {
      char kv[TXT], ov[TXT], idx[TXT] = "";
      unsigned kn = fresh(r);
      emit(r, "%%v%u = mul i32 %s, 16", kn, k0);
      emit(r, "%%v%u.k = add i32 %%v%u, %%tc.koff", kn, kn);
      emit(r, "%%v%u.e = add i32 %%v%u.k, %u", kn, kn, e);
      char kt[32];
      snprintf(kt, sizeof kt, "%%v%u.e", kn);
      snprintf(kv, sizeof kv, "%s", convert(r, kt, "i32", true, false, ity, true, false));
      snprintf(ov, sizeof ov, "%s", convert(r, i ? "%tc.col" : "%tc.row", "i32", true, false, ity, true, false));
      const char *to[2] = {kv, ov};
      tile_index(r, index->src[1], from, to, ity, idx, 0);
      unsigned p = fresh(r), v = fresh(r), nv = fresh(r);
      emit(r, "%%p%u = getelementptr inbounds %s, %s %%data%lld, %s %s", p, mt, r->gptr, (long long)index->src[0]->arg.i, ity,
           idx);
      emit(r, "%%v%u = load %s, %s %%p%u, align 2", v, mt, r->gptr, p);
      char val[TXT];
      snprintf(val, sizeof val, "%%v%u", v);
      if (bf) {
        snprintf(val, sizeof val, "%%v%u.i", v);
        emit(r, "%s = bitcast bfloat %%v%u to i16", val, v);
      }
      emit(r, "%%v%u = insertelement <%u x %s> %s, %s %s, i32 %u", nv, nk, et, vec[i], et, val, e);
      snprintf(vec[i], TXT, "%%v%u", nv);
    }
  }
  unsigned c = fresh(r), d = fresh(r);
  emit(r, "%%v%u = load <%u x float>, %s %%tcw%u", c, nacc, r->pptr, w);
  tc_call(r, d, bf, et, nk, vec[0], vec[1], c);
  emit(r, "store <%u x float> %%v%u, %s %%tcw%u", nacc, d, r->pptr, w);
  r->flops += 2 * 16 * 16 * (uint64_t)ext / t->wave * loop->scope->iters;
  loop_close(r, n, k0);
  unsigned dv = fresh(r);
  emit(r, "%%v%u = load <%u x float>, %s %%tcw%u", dv, nacc, r->pptr, w);
  const char *aty = lty(r, acc[0]->u);
  for (unsigned el = 0; el < nacc && !r->err; el++) {
    unsigned x = fresh(r), row = fresh(r);
    emit(r, "%%v%u = extractelement <%u x float> %%v%u, i32 %u", x, nacc, dv, el);
    emit(r, "%%v%u = add i32 %%tc.r0, %u", row, t->row_mul * el);
    emit(r, "%%v%u.h = mul i32 %%tc.hi, %u", row, t->row_hi);
    emit(r, "%%v%u.r = add i32 %%v%u, %%v%u.h", row, row, row);
    char x0[TXT], xv[TXT], rv[TXT];
    snprintf(x0, sizeof x0, "%%v%u", x);
    snprintf(xv, sizeof xv, "%s", convert(r, x0, "float", true, false, aty, true, false));
    snprintf(rv, sizeof rv, "%%v%u.r", row);
    for (kitem *st = loop->next; st && !r->err; st = st->next) {
      if (st->kind != KI_STORE) continue;
      const ir_node *su = st->u, *index = su->src[0];
      if (index->nsrc != 2) {
        fail_node(r, su, "tc: gated store");
        return;
      }
      const char *ity = lty(r, index->src[1]);
      const ir_node *from[2] = {r->tile_row->u, r->tile_col->u};
      char rr[TXT], cc[TXT], idx[TXT] = "", val[TXT] = "";
      snprintf(rr, sizeof rr, "%s", convert(r, rv, "i32", true, false, ity, true, false));
      snprintf(cc, sizeof cc, "%s", convert(r, "%tc.col", "i32", true, false, ity, true, false));
      const char *to[2] = {rr, cc};
      tile_index(r, index->src[1], from, to, ity, idx, 0);
      const ir_node *sub[2] = {acc[0]->u, NULL};
      const char *subv[2] = {xv, ""};
      tile_value(r, su->src[1], sub, subv, val, 0);
      enum ir_scalar s = IR_DT_SCALAR(index->src[0]->dt);
      unsigned p = fresh(r);
      emit(r, "%%p%u = getelementptr inbounds %s, %s %%data%lld, %s %s", p, mem_ty(s), r->gptr, (long long)index->src[0]->arg.i,
           ity, idx);
      emit(r, "store %s %s, %s %%p%u, align %u", mem_ty(s), val, r->gptr, p, ir_scalar_size(s));
    }
  }
}

static void render_loop(rctx *r, kitem *it) {
  node u = it->u;
  const char *ty = lty(r, u);
  const mapped *m = mapping(r, it);
  char name[TXT];
  if (r->tile == KR_TC && (it == r->tile_row || it == r->tile_col)) {   /* WMMA: the ids of the A/B loads */
    const char *t = it == r->tile_row ? "%tc.row" : "%tc.col";
    set_text(r, it, strcmp(ty, "i32") ? convert(r, t, "i32", true, false, ty, true, false) : t);
    if (it == r->tile_row) {
      render_scope(r, it->body);
      return;
    }
    for (kitem *x = it->body->first; x && !r->err; x = x->next) {   /* up to the reduce loop; it renders the stores */
      if (x->kind == KI_LOOP && kr_tile_of(x->u) == KR_TC) {
        render_tc(r, x);
        return;
      }
      if (x->kind == KI_STORE) {
        fail_node(r, x->u, "tc: a store before the reduce loop");
        return;
      }
      switch (x->kind) {
      case KI_EXPR: render_expr(r, x); break;
      case KI_LOAD: render_load(r, x); break;
      case KI_ACC: render_acc(r, x); break;
      default: fail_node(r, x->u, "tc: unexpected item before the reduce loop"); return;
      }
    }
    return;
  }
  if (r->tile && kr_tile_of(u)) {
    render_tile_loop(r, it);
    return;
  }
  if (r->group && kr_is_group(u)) {   /* the group's threads: lid.x, then the partials combined */
    snprintf(name, sizeof name, "%s", strcmp(ty, "i32") ? convert(r, "%lid.x", "i32", true, false, ty, true, false) : "%lid.x");
    set_text(r, it, name);
    render_scope(r, it->body);
    group_combine(r, it);
    return;
  }
  if (m) {   /* a launch dim: gid * l + lid */
    static const char xyz[] = "xyz";
    if (m->gdim >= 0 && m->ldim >= 0) {
      unsigned t = fresh(r);
      emit(r, "%%v%u = mul i32 %%gid.%c, %u", t, xyz[m->gdim], m->l);
      snprintf(name, sizeof name, "%%ridx%lld", (long long)kr_axis(u));
      emit(r, "%s = add i32 %%v%u, %%lid.%c", name, t, xyz[m->ldim]);
    } else if (m->gdim >= 0) {
      snprintf(name, sizeof name, "%%gid.%c", xyz[m->gdim]);
    } else if (m->ldim >= 0) {
      snprintf(name, sizeof name, "%%lid.%c", xyz[m->ldim]);
    } else {
      snprintf(name, sizeof name, "0");
    }
    if (strcmp(ty, "i32")) {   /* bounds fit 32 bits by construction; keep the node's own type */
      char wide[TXT];
      snprintf(wide, sizeof wide, "%s", convert(r, name, "i32", true, false, ty, true, false));
      snprintf(name, sizeof name, "%s", wide);
    }
    set_text(r, it, name);
    render_scope(r, it->body);
    return;
  }
  unsigned n = r->nloops++;
  /* the counter reaches the extent, which may need 64 bits where the range's values fit 32 */
  const char *cty = strcmp(lty(r, u->src[0]), "i64") ? ty : "i64";
  const char *ext = opnd(r, it->ops[0], cty);
  char extv[TXT], from[64], l[40];
  snprintf(extv, sizeof extv, "%s", ext);
  snprintf(from, sizeof from, "%s", r->cur);
  snprintf(name, sizeof name, "%%ridx%lld_%u", (long long)kr_axis(u), n);
  set_text(r, it, name);
  char start[TXT] = "0";
  if (r->grid && it == r->grid->grid_loop) {   /* the CPU grid: [gid.x * chunk, min(+chunk, extent)) */
    long long ch = (long long)r->grid->grid_chunk, e = (long long)r->grid->grid_extent;
    const char *g = convert(r, "%gid.x", "i32", false, false, cty, true, false);
    snprintf(start, sizeof start, "%%L%u.lo", n);
    emit(r, "%s = mul nsw %s %s, %lld", start, cty, g, ch);
    emit(r, "%%L%u.hi0 = add nsw %s %s, %lld", n, cty, start, ch);
    if (e % ch) {
      emit(r, "%%L%u.hic = icmp slt %s %%L%u.hi0, %lld", n, cty, n, e);
      emit(r, "%%L%u.hi = select i1 %%L%u.hic, %s %%L%u.hi0, %s %lld", n, n, cty, n, cty, e);
    } else {
      emit(r, "%%L%u.hi = add nsw %s %%L%u.hi0, 0", n, cty, n);
    }
    snprintf(extv, sizeof extv, "%%L%u.hi", n);
  }
  emit(r, "br label %%L%u.head", n);
  snprintf(l, sizeof l, "L%u.head", n);
  label(r, l);
  const char *ctr = strcmp(cty, ty) ? ".w" : "";
  emit(r, "%s%s = phi %s [ %s, %%%s ], [ %s.next, %%L%u.latch ]", name, ctr, cty, start, from, name, n);
  emit(r, "%s.c = icmp slt %s %s%s, %s", name, cty, name, ctr, extv);
  emit(r, "br i1 %s.c, label %%L%u.body, label %%L%u.exit", name, n, n);
  snprintf(l, sizeof l, "L%u.body", n);
  label(r, l);
  if (*ctr) emit(r, "%s = trunc %s %s.w to %s", name, cty, name, ty);
  render_scope(r, it->body);
  emit(r, "br label %%L%u.latch", n);
  snprintf(l, sizeof l, "L%u.latch", n);
  label(r, l);
  emit(r, "%s.next = add nsw %s %s%s, 1", name, cty, name, ctr);
  emit(r, "br label %%L%u.head", n);
  snprintf(l, sizeof l, "L%u.exit", n);
  label(r, l);
}

static void render_scope(rctx *r, kscope *sc) {
  for (kitem *it = sc->first; it && !r->err; it = it->next) {
    switch (it->kind) {
    case KI_EXPR: render_expr(r, it); break;
    case KI_LOAD: render_load(r, it); break;
    case KI_STORE: render_store(r, it); break;
    case KI_ACC: render_acc(r, it); break;
    case KI_UPDATE: render_update(r, it); break;
    case KI_LOOP: render_loop(r, it); break;
    case KI_LEAF: break;
    }
    if (r->body.oom || r->pro.oom || r->glob.oom) {
      if (!r->err) r->err = bg_error(BG_ENOMEM, "kernel: out of memory rendering");
      return;
    }
  }
}

/* ---- helpers emitted after the kernel ---- */

/* Threefry-2x32, 20 rounds, as kprelude.c's C (word 0 in the low half of x, key and the result). */
static void emit_threefry(kstr *s) {
  static const unsigned rot[8] = {13, 15, 26, 6, 17, 29, 16, 24};
  unsigned n = 0;
  kstr_puts(s, "\ndefine internal i64 @bg_threefry2x32(i64 %x, i64 %key) #1 {\nentry:\n");
  kstr_puts(s, "  %k0 = trunc i64 %key to i32\n  %kh = lshr i64 %key, 32\n  %k1 = trunc i64 %kh to i32\n"
               "  %k01 = xor i32 %k0, %k1\n  %k2 = xor i32 %k01, 466688986\n"
               "  %xl = trunc i64 %x to i32\n  %xh64 = lshr i64 %x, 32\n  %xh = trunc i64 %xh64 to i32\n"
               "  %a0 = add i32 %xl, %k0\n  %b0 = add i32 %xh, %k1\n");
  const char *ks[3] = {"%k0", "%k1", "%k2"};
  for (unsigned i = 0; i < 5; i++) {
    for (unsigned j = 0; j < 4; j++) {
      unsigned rr = rot[(i & 1) * 4 + j];
      kstr_printf(s, "  %%a%u = add i32 %%a%u, %%b%u\n", n + 1, n, n);
      kstr_printf(s, "  %%l%u = shl i32 %%b%u, %u\n  %%r%u = lshr i32 %%b%u, %u\n  %%o%u = or i32 %%l%u, %%r%u\n", n, n, rr,
                  n, n, 32 - rr, n, n, n);
      kstr_printf(s, "  %%b%u = xor i32 %%o%u, %%a%u\n", n + 1, n, n + 1);
      n++;
    }
    kstr_printf(s, "  %%a%u = add i32 %%a%u, %s\n", n + 1, n, ks[(i + 1) % 3]);
    kstr_printf(s, "  %%t%u = add i32 %s, %u\n  %%b%u = add i32 %%b%u, %%t%u\n", i, ks[(i + 2) % 3], i + 1, n + 1, n, i);
    n++;
  }
  kstr_printf(s, "  %%lo = zext i32 %%a%u to i64\n  %%hi0 = zext i32 %%b%u to i64\n  %%hi = shl i64 %%hi0, 32\n"
                 "  %%res = or i64 %%hi, %%lo\n  ret i64 %%res\n}\n", n, n);
}

/* Kernel attributes of the target: the work-group size it is compiled for. */
static void emit_attributes(kstr *out, const ktarget *tg, const uint32_t lsz[3], bool cpu) {
  uint32_t threads = lsz[0] * lsz[1] * lsz[2];
  if (cpu) {
    /* The host's widest vectors: LLVM prefers 256-bit vectors on AVX-512 machines unless told otherwise (clang
     * -mprefer-vector-width=512 sets the same attribute). No uwtable: no unwind tables in the object. */
    kstr_puts(out, "\nattributes #0 = { nounwind \"prefer-vector-width\"=\"512\" }\n"
                   "attributes #2 = { nounwind alwaysinline \"prefer-vector-width\"=\"512\" }\n");
  } else if (tg == &TG_HOST) {
    kstr_puts(out, "\nattributes #0 = { nounwind }\n");
  } else if (tg == &TG_AMDGPU) {
    /* No implicit (hidden) kernel arguments and no dispatch/queue pointers: the kernarg segment is
     * exactly the buffers and variables, and the dispatch needs only the kernarg pointer. */
    kstr_printf(out,
                "\nattributes #0 = { nounwind \"amdgpu-flat-work-group-size\"=\"1,%u\" \"uniform-work-group-size\"=\"true\" "
                "\"amdgpu-no-implicitarg-ptr\" \"amdgpu-no-dispatch-ptr\" \"amdgpu-no-queue-ptr\" \"amdgpu-no-dispatch-id\" "
                "\"amdgpu-no-hostcall-ptr\" \"amdgpu-no-heap-ptr\" \"amdgpu-no-multigrid-sync-arg\" "
                "\"amdgpu-no-default-queue\" \"amdgpu-no-completion-action\" \"amdgpu-no-lds-kernel-id\" }\n",
                threads);
  } else {   /* .reqntid x, y, z (LLVM NVPTXUsage "Function attributes": nvvm.reqntid) */
    kstr_printf(out, "\nattributes #0 = { nounwind \"nvvm.reqntid\"=\"%u,%u,%u\" }\n", lsz[0], lsz[1], lsz[2]);
  }
  kstr_puts(out, "attributes #1 = { nounwind alwaysinline }\n");
  if (tg == &TG_AMDGPU) kstr_printf(out, "\n!0 = !{i32 %u, i32 %u, i32 %u}\n", lsz[0], lsz[1], lsz[2]);
}

/* Extent of the work-group reduce's group loops (kr_is_group), 0 when none; -1 when two differ. */
static int64_t find_group(const kscope *sc) {
  int64_t g = 0;
  for (const kitem *it = sc->first; it; it = it->next) {
    if (it->kind != KI_LOOP) continue;
    int64_t e = 0, sub;
    if (kr_is_group(it->u) && (!ir_is_const(it->u->src[0], &e) || e < 1)) return -1;
    if (e && g && e != g) return -1;
    if (e) g = e;
    if ((sub = find_group(it->body)) < 0 || (sub && g && sub != g)) return -1;
    if (sub) g = sub;
  }
  return g;
}

/* T of the local-tile reduce loop (kr_tile_of), 0 when none. */
static uint32_t find_tile(const kscope *sc) {
  for (const kitem *it = sc->first; it; it = it->next) {
    if (it->kind != KI_LOOP) continue;
    if (kr_tile_of(it->u)) return kr_tile_of(it->u);
    uint32_t t = find_tile(it->body);
    if (t) return t;
  }
  return 0;
}

/* Work-group reduce ids: slot = flat local id (x fastest), base = the slot of the group's thread 0. */
static void emit_group_ids(rctx *r, const uint32_t lsz[3]) {
  kstr_printf(&r->pro, "  %%gl.first = icmp eq i32 %%lid.x, 0\n");
  const char *y = lsz[1] > 1 ? "%lid.y" : "0", *z = lsz[2] > 1 ? "%lid.z" : "0";
  kstr_printf(&r->pro, "  %%gl.yz0 = mul i32 %s, %u\n  %%gl.yz = add i32 %%gl.yz0, %s\n", z, lsz[1], y);
  kstr_printf(&r->pro, "  %%gl.base = mul i32 %%gl.yz, %u\n  %%gl.slot = add i32 %%gl.base, %%lid.x\n", lsz[0]);
}

int krender_llvm(ir_ctx *ctx, const kinfo *info, klin *l, const char *name, enum kllvm_flavour flavour, const char *mcpu,
                 char **src, uint64_t *flops, uint32_t gsz[3], uint32_t lsz[3]) {
  bool host = flavour == KLLVM_HOST_TEST || flavour == KLLVM_HOST, cpu = flavour == KLLVM_HOST;
  const ktarget *tg = flavour == KLLVM_AMDGPU ? &TG_AMDGPU : flavour == KLLVM_NVPTX ? &TG_NVPTX : &TG_HOST;
  rctx r = {.ctx = ctx, .info = info, .host = host, .cpu = cpu, .tg = tg, .gptr = tg->gptr, .pptr = tg->pptr,
            .tcf = ktc_form_of(mcpu)};
  r.tcs = ktc_shape_of(r.tcf);
  *src = NULL;
  snprintf(r.cur, sizeof r.cur, "entry");
  if (tg == &TG_AMDGPU) {   /* other flavours run the group loop as a plain loop (same result) */
    int64_t g = find_group(l->root);
    if (g < 0 || g > KLLVM_MAX_LOCAL)
      return bg_error(BG_EINVAL, "kernel: llvm render: work-group reduce loops of different or too large extents");
    r.group = g > 1 ? (uint32_t)g : 0;
    r.tile = find_tile(l->root);
  }
  if (cpu) {
    klin_plan_cpu_grid(l, gsz);
    lsz[0] = lsz[1] = lsz[2] = 1;
    r.grid = l;
  } else {
    plan_grid(&r, l, gsz, lsz);
    if (r.err) return r.err;
  }
  r.threads = lsz[0] * lsz[1] * lsz[2];
  emit_ids(&r, gsz, lsz);
  if (r.group) emit_group_ids(&r, lsz);
  if (r.tile == KR_TC && !r.err) {
    kstr_printf(&r.pro, "  %%tc.li = and i32 %%lid.x, 15\n  %%tc.hi = lshr i32 %%lid.x, 4\n");
    kstr_printf(&r.pro, "  %%tc.koff = mul i32 %%tc.hi, %u\n", r.tcs->k_lane_step);   /* k this lane starts at */
    kstr_printf(&r.pro, "  %%tc.r0 = mul i32 %s, 16\n  %%tc.row = add i32 %%tc.r0, %%tc.li\n", gsz[1] > 1 ? "%gid.y" : "0");
    kstr_printf(&r.pro, "  %%tc.c0 = mul i32 %s, 16\n  %%tc.col = add i32 %%tc.c0, %%tc.li\n", gsz[0] > 1 ? "%gid.x" : "0");
  }
  render_scope(&r, l->root);
  if (r.err) {
    kstr_free(&r.pro);
    kstr_free(&r.body);
    kstr_free(&r.glob);
    return r.err;
  }
  kstr out = {0};
  if (cpu) {
    /* The CPU entry ABI (baregpu/compile.h) reads the arguments and calls the body, whose buffers are noalias
     * parameters (as the C renderer's restrict pointers); the body is inlined into the entry. */
    kstr_printf(&out, "; baregpu kernel %s (host)\n\ndefine void @%s(ptr %%args, ptr %%gidp, ptr %%gszp, ptr %%lszp) #0 {\n"
                "entry:\n", name, name);
    for (unsigned i = 0; i < info->nbufs; i++)
      kstr_printf(&out, "  %%a%u.p = getelementptr i8, ptr %%args, i64 %u\n  %%a%u = load ptr, ptr %%a%u.p, align 8\n", i,
                  8 * i, i, i);
    for (unsigned i = 0; i < info->nvars; i++)
      kstr_printf(&out, "  %%v%u.p = getelementptr i8, ptr %%args, i64 %u\n  %%v%u = load i32, ptr %%v%u.p, align 4\n", i,
                  8 * info->nbufs + 4 * i, i, i);
    kstr_printf(&out, "  %%g = load i32, ptr %%gidp, align 4\n  call void @%s.body(", name);
    for (unsigned i = 0; i < info->nbufs; i++) kstr_printf(&out, "ptr %%a%u, ", i);
    for (unsigned i = 0; i < info->nvars; i++) kstr_printf(&out, "i32 %%v%u, ", i);
    kstr_printf(&out, "i32 %%g)\n  ret void\n}\n\ndefine internal void @%s.body(", name);
    for (unsigned i = 0; i < info->nbufs; i++) kstr_printf(&out, "ptr noalias %%data%u, ", i);
    for (unsigned i = 0; i < info->nvars; i++) kstr_printf(&out, "i32 %%var%u, ", i);
    kstr_puts(&out, "i32 %gid.x) #2 {\nentry:\n");
  } else if (host) {
    kstr_printf(&out, "; baregpu kernel %s (host test flavour)\n\ndefine void @%s(ptr %%args, i32 %%gid.x, i32 %%gid.y, "
                "i32 %%gid.z, i32 %%lid.x, i32 %%lid.y, i32 %%lid.z) #0 {\nentry:\n", name, name);
  } else {
    kstr_printf(&out, "; baregpu kernel %s\ntarget triple = \"%s\"\n\ndefine %s void @%s(", name, tg->triple, tg->cc, name);
    for (unsigned i = 0; i < info->nbufs; i++)
      kstr_printf(&out, "%s%s noalias align 16 %%data%u", i ? ", " : "", tg->gptr, i);
    for (unsigned i = 0; i < info->nvars; i++) kstr_printf(&out, "%si32 %%var%u", i || info->nbufs ? ", " : "", i);
    kstr_printf(&out, ") #0%s {\nentry:\n", tg == &TG_AMDGPU ? " !reqd_work_group_size !0" : "");
  }
  if (r.pro.p) kstr_puts(&out, r.pro.p);
  if (r.body.p) kstr_puts(&out, r.body.p);
  kstr_puts(&out, "  ret void\n}\n");
  if (r.threefry) emit_threefry(&out);
  kstr_puts(&out, "\n");
  if (r.glob.p) kstr_printf(&out, "%s\n", r.glob.p);
  if (r.barrier) kstr_puts(&out, "declare void @llvm.amdgcn.s.barrier()\n");
  tc_declare(&r, &out);
  static const char xyz[] = "xyz";
  for (int d = 0; d < 3 && !host; d++) {
    if (gsz[d] > 1) kstr_printf(&out, "declare i32 @%s%c()\n", tg->group_id, xyz[d]);
    if (lsz[d] > 1) kstr_printf(&out, "declare i32 @%s%c()\n", tg->local_id, xyz[d]);
  }
  unsigned own64 = 0;   /* compile/kmath64.c's functions used (bits 1 << KM64_*) */
  for (unsigned i = 0; i < NMATH; i++)
    for (unsigned f64 = 0; f64 < 2; f64++)
      if (r.intrinsics & (1u << (i * 2 + f64))) {
        if (!strncmp(tg->math[i][f64], "bg_", 3)) own64 |= 1u << i;   /* KM64_* is math_ops order */
        else kstr_printf(&out, "declare %s @%s(%s)\n", f64 ? "double" : "float", tg->math[i][f64], f64 ? "double" : "float");
      }
  if (r.prefetch) kstr_puts(&out, "declare void @llvm.prefetch.p0(ptr, i32, i32, i32)\n");
  if (r.fma & 1) kstr_puts(&out, "declare float @llvm.fma.f32(float, float, float)\n");
  if (r.fma & 2) kstr_puts(&out, "declare double @llvm.fma.f64(double, double, double)\n");
  kmath64_emit(&out, own64, (r.fma & 2) != 0);
  emit_attributes(&out, tg, lsz, r.cpu);
  kstr_free(&r.pro);
  kstr_free(&r.body);
  kstr_free(&r.glob);
  *src = kstr_take(&out);
  if (!*src) return bg_error(BG_ENOMEM, "kernel: out of memory rendering");
  *flops = r.flops;
  return 0;
}
