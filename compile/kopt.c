/* compile/kopt.c: optimization choices for the CPU and the range splits that apply them.
 *
 * UPCAST of output axis i by f: r -> r_outer*f + r_inner with r_inner of kind UPCAST; kexpand later
 * replaces r_inner by 0..f-1 (f copies of every store depending on it: register tiling).
 * UNROLL of the innermost reduce range (the reduce RANGE with the largest axis, innermost in loop
 * order) by f: the same split with an UNROLL inner range, closed by the REDUCEs that closed r.
 *
 * Heuristics (opts == NULL), aimed at a scalar CPU target compiled at -O2:
 *  - reduce with >= 2 output axes (matmul): upcast the last output axis by 8 (else 4) and the one
 *    before by 4 (else 2) when they divide: a tile of independent accumulators per reduce loop;
 *  - reduce with 1 output axis: upcast it by 4 when it divides;
 *  - every reduce: unroll the innermost reduce range by 4 when it divides;
 *  - elementwise: upcast the last output axis by 4 when it divides.
 *
 * AMD GPUs (kopt_choose_amdgpu, compile/README.md "GPU structure"): bg_kopts.group (a work-group
 * reduce through LDS), tile (LDS-tiled matmul) and tc (WMMA); the heuristics pick tiles of 16/8 for
 * matmul-shaped kernels, else a group for reduces with few output threads. Other targets reject them. */
#include <stdio.h>
#include <string.h>

#include "baregpu/error.h"
#include "compile/kernel_internal.h"
#include "compile/krender_llvm.h"
#include "compile/ktc.h"

typedef const ir_node *node;

enum { MAX_UPCAST_COPIES = 256 };

static bool const_extent(node r, int64_t *e) { return ir_is_const(r->src[0], e); }

static int check_factor(node r, unsigned f, const char *what, int pos, unsigned maxf) {
  int64_t e;
  if (f > maxf) return bg_error(BG_EINVAL, "kernel: %s factor %u of axis %d exceeds %u", what, f, pos, maxf);
  if (!const_extent(r, &e))
    return bg_error(BG_EINVAL, "kernel: %s of axis %d (r%lld): its extent is symbolic", what, pos, (long long)kr_axis(r));
  if (e % f)
    return bg_error(BG_EINVAL, "kernel: %s factor %u does not divide the extent %lld of axis %d (r%lld)", what, f,
                    (long long)e, pos, (long long)kr_axis(r));
  return 0;
}

static unsigned pick(node r, const unsigned *fs, int nf) {
  int64_t e;
  if (!const_extent(r, &e)) return 0;
  for (int i = 0; i < nf; i++)
    if (e % fs[i] == 0 && e >= (int64_t)fs[i]) return fs[i];
  return 0;
}

/* The loop extent of the outermost reduce range a group splits: red[0], already divided by the unroll
 * when red[0] is also the innermost reduce range (the one unroll splits). 0 when symbolic. */
static int64_t group_extent(const kinfo *info, unsigned unroll) {
  int64_t e;
  if (!info->nred || !const_extent(info->red[0], &e)) return 0;
  if (info->nred == 1 && unroll > 1) e /= unroll;
  return e;
}

static int check_group(const kinfo *info, unsigned unroll, unsigned g) {
  if (!info->nred) return bg_error(BG_EINVAL, "kernel: group %u of a kernel without a reduce", g);
  if (g > KLLVM_MAX_LOCAL) return bg_error(BG_EINVAL, "kernel: group %u exceeds %d threads", g, KLLVM_MAX_LOCAL);
  int64_t e = group_extent(info, unroll);
  if (!e)
    return bg_error(BG_EINVAL, "kernel: group of reduce axis r%lld: its extent is symbolic", (long long)kr_axis(info->red[0]));
  if (e % g)
    return bg_error(BG_EINVAL, "kernel: group %u does not divide the extent %lld of reduce axis r%lld (after unroll %u)", g,
                    (long long)e, (long long)kr_axis(info->red[0]), unroll > 1 ? unroll : 1);
  return 0;
}

/* AMD GPUs: on top of the CPU choice, a reduce whose outputs give fewer threads than a wave32 (a full
 * reduction, a few rows) splits its outermost reduce range across a work-group (tinygrad's GROUPTOP,
 * codegen/opt/heuristic.py): the largest power of two >= 8 and <= 256 / output threads that divides
 * the loop and leaves each thread >= 4 iterations. */
static void gpu_heuristics(const kinfo *info, bg_kopts *a) {
  if (!info->has_reduce || !info->nred) return;
  uint64_t threads = 1;
  for (unsigned i = 0; i < info->nout; i++) {
    int64_t e;
    if (!const_extent(info->out[i], &e)) return;
    threads *= (uint64_t)e / (i < 8 && a->upcast[i] > 1 ? a->upcast[i] : 1);
  }
  if (threads >= 32) return;
  int64_t e = group_extent(info, a->unroll);
  for (unsigned g = (unsigned)(KLLVM_MAX_LOCAL / threads); g >= 8; g /= 2) {
    if ((g & (g - 1)) || !e || e % g || e / g < 4) continue;
    a->group = (uint16_t)g;
    return;
  }
}

/* Local tiles of T apply to a kernel of two output axes (rows, columns) and one reduce axis, constant
 * extents divisible by T, whose one STORE holds (a cast of) an ADD REDUCE of a matmul-shaped value
 * (kllvm_tile_loads). 0 when they apply; else -BG_EINVAL with a message when `say`, -1 silently. */
static int tile_fits(ir_ctx *ctx, node sink, const kinfo *info, unsigned t, bool say) {
  const char *why = NULL;
  int64_t e[3] = {0, 0, 0};
  bool tc = t == KR_TC, bf;
  if (tc) t = 16;   /* then the shape checks below, as for a tile of 16 */
  if (!tc && (t < 2 || t > 16)) why = "T must be 2..16 (T x T threads <= 256)";
  else if (info->nout != 2 || info->nred != 1) why = "needs exactly 2 output axes and 1 reduce axis";
  else if (!const_extent(info->out[0], &e[0]) || !const_extent(info->out[1], &e[1]) || !const_extent(info->red[0], &e[2]))
    why = "needs constant extents";
  else if (e[0] % t || e[1] % t || e[2] % t) why = "T must divide every extent";
  else if (!sink || sink->nsrc != 1 || sink->src[0]->op != IR_STORE) why = "needs exactly one STORE";
  else if (tc && sink->src[0]->src[0]->nsrc != 2) why = "the STORE is gated";
  else {
    node v = sink->src[0]->src[1], ld[2];
    if (v->op == IR_CAST) v = v->src[0];
    if (v->op != IR_REDUCE || v->arg.i != IR_ADD || v->nsrc != 2) why = "the stored value is not a sum REDUCE";
    else if (!tc && kllvm_tile_loads(ctx, v->src[0], info->red[0], info->out[0], info->out[1], ld))
      why = "the reduced value is not a product of a (row, k) load and a (k, column) load";
    else if (tc && kllvm_tc_loads(ctx, v->src[0], info->red[0], info->out[0], info->out[1], ld, &bf))
      why = "the reduced value is not a product of float16 (or bfloat16) (row, k) and (k, column) loads";
  }
  if (!why) return 0;
  if (!say) return -1;
  if (tc)
    return bg_error(BG_EINVAL, "kernel: tc (WMMA 16x16x16): %s (extents %lld x %lld, reduce %lld)", why, (long long)e[0],
                    (long long)e[1], (long long)e[2]);
  return bg_error(BG_EINVAL, "kernel: tile %u: %s (extents %lld x %lld, reduce %lld)", t, why, (long long)e[0],
                  (long long)e[1], (long long)e[2]);
}

static void heuristics(const kinfo *info, bg_kopts *a) {
  static const unsigned f84[] = {8, 4}, f42[] = {4, 2}, f4[] = {4};
  unsigned n = info->nout;
  if (n > 8) n = 8;
  if (!info->has_reduce) {
    if (n >= 1) a->upcast[n - 1] = (uint8_t)pick(info->out[n - 1], f4, 1);
    return;
  }
  if (n >= 2) {
    a->upcast[n - 1] = (uint8_t)pick(info->out[n - 1], f84, 2);
    a->upcast[n - 2] = (uint8_t)pick(info->out[n - 2], f42, 2);
  } else if (n == 1) {
    a->upcast[0] = (uint8_t)pick(info->out[0], f4, 1);
  }
  if (info->nred) a->unroll = (uint8_t)pick(info->red[info->nred - 1], f4, 1);
}

typedef struct gpu_ctx {
  ir_ctx *ctx;
  node sink;
  const char *mcpu;
  ktc_form tc;       /* the processor's tensor-core form (ktc.h) */
} gpu_ctx;

static int choose(const kinfo *info, const bg_kopts *opts, bg_kopts *a, const gpu_ctx *gpu);

int kopt_choose(const kinfo *info, const bg_kopts *opts, bg_kopts *a) { return choose(info, opts, a, NULL); }

static int choose(const kinfo *info, const bg_kopts *opts, bg_kopts *a, const gpu_ctx *gpu) {
  memset(a, 0, sizeof *a);
  if (opts && opts->no_opt) {
    a->no_opt = true;
    return 0;
  }
  if (!opts) {
    heuristics(info, a);
    const ktc_shape *tc = gpu ? ktc_shape_of(gpu->tc) : NULL;
    if (tc && tc->by_default && tile_fits(gpu->ctx, gpu->sink, info, KR_TC, false) == 0) {
      memset(a, 0, sizeof *a);   /* matmuls use WMMA on RDNA4 and MFMA on CDNA3 (not RDNA3: ktc.h) */
      a->tc = true;
    } else if (gpu && tile_fits(gpu->ctx, gpu->sink, info, 16, false) == 0) {
      memset(a, 0, sizeof *a);   /* the tiled GEMM replaces the register tile */
      a->tile = 16;
    } else if (gpu && tile_fits(gpu->ctx, gpu->sink, info, 8, false) == 0) {
      memset(a, 0, sizeof *a);
      a->tile = 8;
    } else if (gpu) {
      gpu_heuristics(info, a);
    }
    return 0;
  }
  if (opts->tc) {
    if (!gpu) return bg_error(BG_EINVAL, "kernel: tc (WMMA) needs an AMD GPU target");
    /* LLVM would fail instruction selection, fatally, on a matrix intrinsic the processor lacks */
    if (gpu->tc == KTC_NONE)
      return bg_error(BG_ENOTSUP, "kernel: tc: %s has no tensor-core form here (WMMA on gfx11 and gfx1200/gfx1201, MFMA "
                      "on gfx942/gfx950)", gpu->mcpu ? gpu->mcpu : "(no processor)");
    if (opts->group > 1 || opts->unroll > 1 || opts->tile > 1)
      return bg_error(BG_EINVAL, "kernel: tc (WMMA) excludes tile, group and unroll");
    for (int i = 0; i < 8; i++)
      if (opts->upcast[i] > 1) return bg_error(BG_EINVAL, "kernel: tc (WMMA) excludes upcast (axis %d)", i);
    int rc = tile_fits(gpu->ctx, gpu->sink, info, KR_TC, true);
    if (rc) return rc;
    a->tc = true;
    return 0;
  }
  if (opts->tile > 1) {
    if (!gpu)
      return bg_error(BG_EINVAL, "kernel: tile %u (matmul tiles staged in LDS) needs an AMD GPU target", opts->tile);
    if (opts->group > 1 || opts->unroll > 1)
      return bg_error(BG_EINVAL, "kernel: tile %u excludes group and unroll", opts->tile);
    for (int i = 0; i < 8; i++)
      if (opts->upcast[i] > 1) return bg_error(BG_EINVAL, "kernel: tile %u excludes upcast (axis %d)", opts->tile, i);
    int rc = tile_fits(gpu->ctx, gpu->sink, info, opts->tile, true);
    if (rc) return rc;
    a->tile = opts->tile;
    return 0;
  }
  if (opts->group > 1) {
    if (!gpu)
      return bg_error(BG_EINVAL, "kernel: group %u (a work-group reduce through LDS) needs an AMD GPU target", opts->group);
    int rc = check_group(info, opts->unroll, opts->group);
    if (rc) return rc;
    a->group = opts->group;
  }
  unsigned copies = 1;
  for (int i = 0; i < 8; i++) {
    unsigned f = opts->upcast[i];
    if (f <= 1) continue;
    if ((unsigned)i >= info->nout)
      return bg_error(BG_EINVAL, "kernel: upcast of output axis %d, but the kernel has %u output axes", i, info->nout);
    int rc = check_factor(info->out[i], f, "upcast", i, KMAX_UPCAST);
    if (rc) return rc;
    copies *= f;
    a->upcast[i] = (uint8_t)f;
  }
  if (opts->unroll > 1) {
    if (!info->nred) return bg_error(BG_EINVAL, "kernel: unroll %u of a kernel without a reduce", opts->unroll);
    int rc = check_factor(info->red[info->nred - 1], opts->unroll, "unroll", (int)(info->nout + info->nred - 1), KMAX_UNROLL);
    if (rc) return rc;
    a->unroll = opts->unroll;
  }
  if (copies > MAX_UPCAST_COPIES)
    return bg_error(BG_EINVAL, "kernel: upcasts give %u copies of the stores, at most %d", copies, MAX_UPCAST_COPIES);
  return 0;
}

int kopt_choose_amdgpu(ir_ctx *ctx, const ir_node *sink, const kinfo *info, const bg_kopts *opts, const char *mcpu,
                       bg_kopts *applied) {
  gpu_ctx g = {ctx, sink, mcpu, ktc_form_of(mcpu)};
  return choose(info, opts, applied, &g);
}

typedef struct split {
  node r, expr, outer, inner;
  bool outer_loop;   /* outer extent > 1: a REDUCE keeps closing it */
} split;

static node r_split(ir_rewriter *rw, node u) {
  const split *s = ir_rw_user(rw);
  if (u == s->r) return s->expr;
  if (u->op != IR_REDUCE) return NULL;
  unsigned at = 0;
  while (at < u->nsrc && u->src[at] != s->expr) at++;
  if (at == u->nsrc || at == 0) return NULL;
  node src[KMAX_RANGES + 2];
  unsigned n = 0;
  for (unsigned i = 0; i < u->nsrc && n < KMAX_RANGES; i++) {
    if (i != at) {
      src[n++] = u->src[i];
      continue;
    }
    if (s->outer_loop) src[n++] = s->outer;
    src[n++] = s->inner;
  }
  return ir_intern(ir_rw_ctx(rw), IR_REDUCE, u->dt, u->arg, n, src);
}

static node r_rename(ir_rewriter *rw, node u) {
  const split *s = ir_rw_user(rw);
  return u == s->r ? s->expr : NULL;
}

static node split_range(ir_ctx *ctx, node sink, node r, unsigned f, int kind, int64_t axis) {
  int64_t e;
  const ir_dtype idx = IR_DT_INDEX;
  if (!const_extent(r, &e)) return NULL;
  split s = {.r = r, .outer_loop = e / f > 1};
  ir_arg ao = {.i = r->arg.i}, ai = {.i = kr_arg(axis, kind)};
  node eo = ir_const_int(ctx, idx, e / f), ei = ir_const_int(ctx, idx, f);
  if (!eo || !ei) return NULL;
  s.outer = ir_intern(ctx, IR_RANGE, idx, ao, 1, &eo);
  s.inner = ir_intern(ctx, IR_RANGE, idx, ai, 1, &ei);
  s.expr = ir_alu2(ctx, IR_ADD, ir_alu2(ctx, IR_MUL, s.outer, ei), s.inner);
  if (!s.expr) return NULL;
  static const ir_rule rules[] = {r_split};
  static const ir_rule_set set = {"ksplit", 1, rules};
  const ir_rule_set *sets[1] = {&set};
  return ir_rewrite(ctx, sink, sets, 1, &s);
}

const ir_node *kopt_apply(ir_ctx *ctx, const ir_node *sink, const kinfo *info, const bg_kopts *a) {
  if (a->no_opt) return sink;
  int64_t axis = info->max_axis + 1;
  bool changed = false;
  for (unsigned i = 0; i < 8 && i < info->nout && sink; i++)
    if (a->upcast[i] > 1) {
      sink = split_range(ctx, sink, info->out[i], a->upcast[i], KR_UPCAST, axis++);
      changed = true;
    }
  if (a->unroll > 1 && info->nred && sink) {
    sink = split_range(ctx, sink, info->red[info->nred - 1], a->unroll, KR_UNROLL, axis++);
    changed = true;
  }
  if ((a->tile > 1 || a->tc) && info->nred && sink) {   /* the reduce range moves to the tile band (krender_llvm.h) */
    int64_t e;
    const_extent(info->red[0], &e);
    split s = {.r = info->red[0]};
    ir_arg at = {.i = kr_arg(kr_tile_axis(a->tc ? KR_TC : a->tile, kr_axis(info->red[0])), KR_REDUCE)};
    node ext = ir_const_int(ctx, IR_DT_INDEX, e);
    s.expr = ext ? ir_intern(ctx, IR_RANGE, IR_DT_INDEX, at, 1, &ext) : NULL;
    static const ir_rule rules[] = {r_rename};
    static const ir_rule_set set = {"ktile", 1, rules};
    const ir_rule_set *sets[1] = {&set};
    sink = s.expr ? ir_rewrite(ctx, sink, sets, 1, &s) : NULL;
    changed = true;
  }
  if (a->group > 1 && info->nred && sink) {
    /* the range now holding red[0]'s axis (the unroll may have split it): r -> r_outer*g + r_group, the
     * group range a REDUCE range with a negative axis, so it opens first among its REDUCE's loops */
    const ir_node *rs[KMAX_RANGES];
    int nr = kcollect_ranges(ctx, sink, rs, KMAX_RANGES);
    node target = NULL;
    for (int i = 0; i < nr; i++)
      if (kr_kind(rs[i]) == KR_REDUCE && kr_axis(rs[i]) == kr_axis(info->red[0])) target = rs[i];
    sink = target ? split_range(ctx, sink, target, a->group, KR_REDUCE, kr_group_axis(kr_axis(info->red[0]))) : NULL;
    changed = true;
  }
  if (!sink) {
    bg_error(BG_EINVAL, "kernel: applying optimizations: %s", ir_error(ctx));
    return NULL;
  }
  if (!changed) return sink;
  const ir_node *s = ksimplify(ctx, sink);
  if (!s) bg_error(BG_EINVAL, "kernel: simplifying after optimizations: %s", ir_error(ctx));
  return s;
}

static int name_rank(node r) {
  switch (kr_kind(r)) {
  case KR_LOOP: return 0;
  case KR_UPCAST: return 1;
  case KR_REDUCE: return 2;
  default: return 3;
  }
}

static void put_extent(char *name, size_t n, node r) {
  char part[40];
  int64_t e;
  size_t len = strlen(name);
  if (const_extent(r, &e)) {
    if (e == 1) return;
    snprintf(part, sizeof part, "_%lld", (long long)e);
  } else {
    const ir_var_info *vi = ir_var_get(r->src[0]);
    size_t k = 1;
    part[0] = '_';
    for (const char *c = vi ? vi->name : "s"; *c && k < 16; c++)
      part[k++] = (char)((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ? *c : '_');
    part[k] = '\0';
  }
  if (len + strlen(part) < n) memcpy(name + len, part, strlen(part) + 1);
}

void kopt_name(ir_ctx *ctx, const ir_node *sink, char *name, size_t n) {
  const ir_node *rs[KMAX_RANGES + 8];
  int nr = kcollect_ranges(ctx, sink, rs, KMAX_RANGES + 8);
  bool reduce = false;
  for (int i = 0; i < nr; i++) reduce |= kr_kind(rs[i]) == KR_REDUCE || kr_kind(rs[i]) == KR_UNROLL;
  snprintf(name, n, "%s", reduce ? "r" : "E");
  for (int rank = 0; rank < 4; rank++)
    for (int i = 0; i < nr; i++)
      if (name_rank(rs[i]) == rank) put_extent(name, n, rs[i]);
  if (strlen(name) == 1) snprintf(name, n, "%s_1", reduce ? "r" : "E");
}

/* Heuristics for CPU kernels compiled by LLVM for the host (compile/llvm_host.h), separate from the ones above
 * (C kernels and the GPU targets). The host has 512-bit vectors and FMA on AVX-512 machines and 32 vector
 * registers: a matmul's register tile is 8 rows x 32 columns (16 zmm accumulators, two vector loads of the
 * right-hand matrix and 8 broadcasts per step, as in BLAS micro-kernels such as OpenBLAS's sgemm for
 * SkylakeX), falling back to 4 x 16 / 2 x 8 when the extents do not divide; the reduce is not unrolled
 * (LLVM unrolls the innermost loop itself, and an unroll multiplies the code of the tile). One output axis:
 * upcast 4 and unroll 4 as for C; elementwise kernels keep the C heuristics (LLVM's loop vectorizer widens
 * their innermost loop). */
void kopt_host_heuristics(const kinfo *info, bg_kopts *a) {
  static const unsigned cols[] = {32, 16, 8, 4}, rows[] = {8, 4, 2};
  unsigned n = info->nout;
  if (n > 8) n = 8;
  if (!info->has_reduce || n < 2) return;   /* kopt_choose's heuristics stand */
  memset(a, 0, sizeof *a);
  a->upcast[n - 1] = (uint8_t)pick(info->out[n - 1], cols, 4);
  a->upcast[n - 2] = (uint8_t)pick(info->out[n - 2], rows, 3);
}
