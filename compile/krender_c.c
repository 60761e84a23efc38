/* compile/krender_c.c: C source for the CPU device from a linearized kernel.
 *
 * Shape of the output:
 *   #include <stdint.h> <string.h> <math.h>, the prelude helpers the kernel uses (kprelude.c)
 *   void NAME(const void *args, const uint32_t gid[3], const uint32_t gsz[3], const uint32_t lsz[3]) {
 *     float *restrict data0 = (float *)(uintptr_t)((const uint64_t *)args)[0];   (const if only read)
 *     int32_t var0; memcpy(&var0, (const char *)args + 8*nbufs + 4*i, sizeof var0);
 *     loops, values, accumulators, stores
 *   }
 * Values: a node used once, in the scope where it is computed, is inlined into its user; others
 * are declared (vN). Index math is int when vmin/vmax fit in 32 bits, else int64_t (the bounds
 * guarantee no overflow). Integer value arithmetic that may wrap goes through the unsigned type
 * (ir semantics wrap; C signed overflow is undefined); signed division guards x / -1; shifts by
 * an amount >= the width give 0 (or the sign, arithmetic right shift) as in ir_eval. Gated loads
 * are one expression `(valid ? buf[idx] : 0)`, gated stores `if (valid) buf[idx] = v;`. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baregpu/error.h"
#include "compile/krender.h"
#include "util/half.h"

typedef const ir_node *node;

enum { INLINE_MAX = 160 };

typedef struct rctx {
  ir_ctx *ctx;
  const kinfo *info;
  kstr body;
  kprelude pre;
  unsigned nv, nacc;
  const klin *grid;         /* grid_loop: the loop split over work-groups */
  uint64_t flops;
  int err;
} rctx;

static const char *scalar_ctype(enum ir_scalar s) {
  switch (s) {
  case IR_DT_BOOL: return "_Bool";
  case IR_DT_INT8: return "int8_t";
  case IR_DT_UINT8: return "uint8_t";
  case IR_DT_INT16: return "int16_t";
  case IR_DT_UINT16: return "uint16_t";
  case IR_DT_INT32: return "int32_t";
  case IR_DT_UINT32: return "uint32_t";
  case IR_DT_INT64: return "int64_t";
  case IR_DT_UINT64: return "uint64_t";
  case IR_DT_FLOAT16:
  case IR_DT_BFLOAT16: return "uint16_t";
  case IR_DT_FLOAT32: return "float";
  case IR_DT_FLOAT64: return "double";
  case IR_DT_INDEX: return "int64_t";
  default: return "void";
  }
}

static bool fits32(rctx *r, node u) { return ir_vmin(r->ctx, u) >= INT32_MIN && ir_vmax(r->ctx, u) <= INT32_MAX; }

static const char *ctype_of(rctx *r, node u) {
  if (u->op == IR_DEFINE_VAR) return "int32_t";
  if (IR_DT_SCALAR(u->dt) == IR_DT_INDEX) return fits32(r, u) ? "int" : "int64_t";
  return scalar_ctype(IR_DT_SCALAR(u->dt));
}

static bool is_int64(const char *ct) { return !strcmp(ct, "int64_t"); }

/* ---- literals ---- */

static void lit_int(char *b, size_t n, enum ir_scalar s, int64_t v) {
  if (s == IR_DT_BOOL) snprintf(b, n, "%d", v != 0);
  else if (s == IR_DT_UINT64) snprintf(b, n, "%" PRIu64 "ull", (uint64_t)v);
  else if (s == IR_DT_UINT32) snprintf(b, n, "%" PRIu32 "u", (uint32_t)v);
  else if (v == INT64_MIN) snprintf(b, n, "(-9223372036854775807ll-1)");
  else if (v == INT32_MIN) snprintf(b, n, "(-2147483647-1)");
  else if (v > INT32_MIN && v <= INT32_MAX) snprintf(b, n, v < 0 ? "(%" PRId64 ")" : "%" PRId64, v);
  else snprintf(b, n, v < 0 ? "(%" PRId64 "ll)" : "%" PRId64 "ll", v);
}

static void lit_float(char *b, size_t n, double v, bool f32) {
  if (isnan(v)) {
    snprintf(b, n, "%s", f32 ? "NAN" : "((double)NAN)");
    return;
  }
  if (isinf(v)) {
    snprintf(b, n, "%s%sINFINITY%s", v < 0 ? "(-" : "", f32 ? "" : "(double)", v < 0 ? ")" : "");
    return;
  }
  char t[48];
  snprintf(t, sizeof t, f32 ? "%.9g" : "%.17g", v);
  if (!strpbrk(t, ".e")) strcat(t, ".0");
  snprintf(b, n, "%s%s%s%s", t[0] == '-' ? "(" : "", t, f32 ? "f" : "", t[0] == '-' ? ")" : "");
}

static void lit_const(char *b, size_t n, node u) {
  enum ir_scalar s = IR_DT_SCALAR(u->dt);
  if (s == IR_DT_FLOAT16) snprintf(b, n, "((uint16_t)0x%04xu)", bg_f32_to_f16((float)u->arg.f));
  else if (s == IR_DT_BFLOAT16) snprintf(b, n, "((uint16_t)0x%04xu)", bg_f32_to_bf16((float)u->arg.f));
  else if (ir_scalar_is_float(s)) lit_float(b, n, u->arg.f, s != IR_DT_FLOAT64);
  else lit_int(b, n, s, u->arg.i);
}

static void identity(char *b, size_t n, int64_t op, enum ir_scalar s) {
  if (ir_scalar_is_float(s)) {
    bool f32 = s != IR_DT_FLOAT64;
    lit_float(b, n, op == IR_MAX ? -INFINITY : op == IR_MUL ? 1.0 : 0.0, f32);
    return;
  }
  int64_t v = op == IR_MUL;
  if (op == IR_MAX && ir_scalar_is_signed(s)) v = s == IR_DT_INT8 ? INT8_MIN : s == IR_DT_INT16 ? INT16_MIN : s == IR_DT_INT32 ? INT32_MIN : INT64_MIN;
  lit_int(b, n, s, v);
}

/* ---- expressions ---- */

static char *dupstr(const char *s) {
  size_t n = strlen(s) + 1;
  char *p = malloc(n);
  if (p) memcpy(p, s, n);
  return p;
}

static const char *text(rctx *r, kitem *o) {
  if (o->text) return o->text;
  char b[64];
  if (o->u->op == IR_CONST) {
    lit_const(b, sizeof b, o->u);
  } else {
    unsigned i = 0;
    while (i < r->info->nvars && r->info->vars[i] != o->u) i++;
    if (i == r->info->nvars && !r->err) {
      char d[256];
      kdescribe(o->u, d, sizeof d);
      r->err = bg_error(BG_EINVAL, "kernel: render: variable not among the kernel's arguments: %s", d);
    }
    snprintf(b, sizeof b, "var%u", i);
  }
  if (!(o->text = dupstr(b)) && !r->err) r->err = bg_error(BG_ENOMEM, "kernel: out of memory rendering");
  return o->text ? o->text : "0";
}

static const char *libm_name(enum ir_op op) {
  switch (op) {
  case IR_EXP2: return "exp2";
  case IR_LOG2: return "log2";
  case IR_SIN: return "sin";
  case IR_SQRT: return "sqrt";
  default: return "trunc";
  }
}

static bool negative_const(node b) {
  if (!b || b->op != IR_CONST) return false;
  if (ir_scalar_is_float(IR_DT_SCALAR(b->dt))) return b->arg.f < 0 && !isinf(b->arg.f);
  return IR_DT_SCALAR(b->dt) == IR_DT_INDEX && b->arg.i < 0 && b->arg.i != INT64_MIN;
}

static bool signed_wide_value(enum ir_scalar s) { return s == IR_DT_INT32 || s == IR_DT_INT64; }

/* The divisor b may be -1 (signed 32/64-bit values only: narrower ones are promoted to int). */
static bool div_guard(enum ir_scalar s, node b) {
  int64_t k;
  return signed_wide_value(s) && (!b || !ir_is_const(b, &k) || k == -1);
}

static void render_cast(rctx *r, kstr *s, ir_dtype to, const char *ct, ir_dtype from, const char *a) {
  enum ir_scalar t = IR_DT_SCALAR(to), f = IR_DT_SCALAR(from);
  const bool half_in = f == IR_DT_FLOAT16 || f == IR_DT_BFLOAT16;
  kstr x = {0};
  if (half_in) {   /* 16-bit pattern -> float32 first */
    r->pre.need |= f == IR_DT_FLOAT16 ? KP_H2F : KP_BF2F;
    kstr_printf(&x, "%s(%s)", f == IR_DT_FLOAT16 ? "bg_h2f" : "bg_bf2f", a);
    if (x.oom) {
      s->oom = true;
      kstr_free(&x);
      return;
    }
    a = x.p;
  }
  if (t == f && !half_in) kstr_puts(s, a);
  else if (t == IR_DT_BOOL) kstr_printf(s, "(%s != 0)", a);
  else if (t == IR_DT_FLOAT16 || t == IR_DT_BFLOAT16) {
    /* from float64 (and ints, through double) in one rounding: round to odd into float first */
    bool odd = !half_in && f != IR_DT_FLOAT32;
    r->pre.need |= (t == IR_DT_FLOAT16 ? KP_F2H : KP_F2BF) | (odd ? KP_D2F_ODD : 0u);
    kstr_printf(s, "%s(%s%s)", t == IR_DT_FLOAT16 ? "bg_f2h" : "bg_f2bf", odd ? "bg_d2f_odd((double)" : "", a);
    if (odd) kstr_puts(s, ")");
  } else if (t == IR_DT_FLOAT32 && half_in) kstr_puts(s, a);
  else kstr_printf(s, "((%s)%s)", ct, a);
  kstr_free(&x);
}

/* One ALU op: result dtype dt (C type ct), source nodes src (for dtypes and constant operands,
 * NULL for an accumulator), operand texts a. */
static void render_alu(rctx *r, kstr *s, enum ir_op op, ir_dtype dt, const char *ct, const node *src,
                       const char *const *a) {
  enum ir_scalar sc = IR_DT_SCALAR(dt);
  const bool fl = ir_scalar_is_float(sc), ix = sc == IR_DT_INDEX;
  const char *ut = ix || ir_scalar_size(sc) == 8 ? "uint64_t" : "uint32_t", *fs = sc == IR_DT_FLOAT64 ? "" : "f";
  const char *i64 = ix && is_int64(ct) ? "(int64_t)" : "";
  const char *sym = NULL;
  int64_t k;
  switch (op) {
  case IR_ADD: sym = "+"; break;
  case IR_SUB: sym = "-"; break;
  case IR_MUL: sym = "*"; break;
  case IR_AND: sym = "&"; break;
  case IR_OR: sym = "|"; break;
  case IR_XOR: sym = "^"; break;
  case IR_CMPLT: sym = "<"; break;
  case IR_CMPNE: sym = "!="; break;
  case IR_CMPEQ: sym = "=="; break;
  case IR_IDIV: sym = "/"; break;
  case IR_MOD: sym = "%"; break;
  default: break;
  }
  switch (op) {
  case IR_NEG:
    if (fl) kstr_printf(s, "(-%s)", a[0]);
    else if (ix) kstr_printf(s, "(-(%s)%s)", ct, a[0]);
    else kstr_printf(s, "((%s)(0u - (%s)%s))", ct, ut, a[0]);
    return;
  case IR_EXP2: case IR_LOG2: case IR_SIN: case IR_SQRT: case IR_TRUNC:
    kstr_printf(s, "%s%s(%s)", libm_name(op), fs, a[0]);
    return;
  case IR_RECIP: kstr_printf(s, "(1.0%s / %s)", fs, a[0]); return;
  case IR_FDIV: kstr_printf(s, "(%s / %s)", a[0], a[1]); return;
  case IR_ADD: case IR_SUB: case IR_MUL:
    if (op == IR_ADD && (fl || ix) && src && negative_const(src[1])) {   /* a + (-k) reads as a - k */
      char lit[64];
      if (fl) lit_float(lit, sizeof lit, -src[1]->arg.f, sc != IR_DT_FLOAT64);
      else lit_int(lit, sizeof lit, sc, -src[1]->arg.i);
      kstr_printf(s, "(%s%s - %s)", i64, a[0], lit);
    } else if (fl || ix) kstr_printf(s, "(%s%s %s %s)", i64, a[0], sym, a[1]);
    else kstr_printf(s, "((%s)((%s)%s %s (%s)%s))", ct, ut, a[0], sym, ut, a[1]);
    return;
  case IR_IDIV: case IR_MOD:
    if (ix) kstr_printf(s, "(%s%s %s %s)", i64, a[0], sym, a[1]);
    else if (div_guard(sc, src ? src[1] : NULL) && op == IR_IDIV)
      kstr_printf(s, "(%s == -1 ? (%s)(0u - (%s)%s) : %s / %s)", a[1], ct, ut, a[0], a[0], a[1]);
    else if (div_guard(sc, src ? src[1] : NULL)) kstr_printf(s, "(%s == -1 ? (%s)0 : %s %% %s)", a[1], ct, a[0], a[1]);
    else kstr_printf(s, "((%s)(%s %s %s))", ct, a[0], sym, a[1]);
    return;
  case IR_MAX: kstr_printf(s, "(%s >= %s ? %s : %s)", a[0], a[1], a[0], a[1]); return;
  case IR_CMPLT: case IR_CMPNE: case IR_CMPEQ:
    if (src && src[0] && IR_DT_SCALAR(src[0]->dt) == IR_DT_BOOL && op != IR_CMPLT && ir_is_const(src[1], &k) &&
        k == (op == IR_CMPNE))
      kstr_printf(s, "(!%s)", a[0]);   /* x != true, x == false */
    else kstr_printf(s, "(%s %s %s)", a[0], sym, a[1]);
    return;
  case IR_AND: case IR_OR: case IR_XOR:
    if (ix) kstr_printf(s, "(%s %s %s)", a[0], sym, a[1]);
    else kstr_printf(s, "((%s)(%s %s %s))", ct, a[0], sym, a[1]);
    return;
  case IR_SHL: case IR_SHR: {
    unsigned w = ix ? 64u : sc == IR_DT_BOOL ? 8u : ir_scalar_size(sc) * 8u;
    bool sg = ir_scalar_is_signed(sc);
    if (src && ir_is_const(src[1], &k)) {
      uint64_t amt = (uint64_t)k;
      if (amt >= w && (op == IR_SHL || !sg)) kstr_printf(s, "((%s)0)", ct);
      else if (amt >= w) kstr_printf(s, "((%s)(%s >> %u))", ct, a[0], w - 1);
      else if (op == IR_SHL) kstr_printf(s, "((%s)((%s)%s << %u))", ct, ut, a[0], (unsigned)amt);
      else kstr_printf(s, "((%s)(%s >> %u))", ct, a[0], (unsigned)amt);
    } else if (op == IR_SHL) {
      kstr_printf(s, "((uint64_t)%s < %uu ? (%s)((%s)%s << %s) : (%s)0)", a[1], w, ct, ut, a[0], a[1], ct);
    } else if (sg) {
      kstr_printf(s, "((%s)(%s >> ((uint64_t)%s < %uu ? %s : %u)))", ct, a[0], a[1], w, a[1], w - 1);
    } else {
      kstr_printf(s, "((uint64_t)%s < %uu ? (%s)(%s >> %s) : (%s)0)", a[1], w, ct, a[0], a[1], ct);
    }
    return;
  }
  case IR_WHERE: kstr_printf(s, "(%s ? %s : %s)", a[0], a[1], a[2]); return;
  case IR_MULACC:
    if (fl) kstr_printf(s, "((%s * %s) + %s)", a[0], a[1], a[2]);
    else if (ix) kstr_printf(s, "(%s%s * %s + %s)", i64, a[0], a[1], a[2]);
    else kstr_printf(s, "((%s)((%s)%s * (%s)%s + (%s)%s))", ct, ut, a[0], ut, a[1], ut, a[2]);
    return;
  case IR_THREEFRY:
    r->pre.need |= KP_THREEFRY;
    kstr_printf(s, "bg_threefry2x32(%s, %s)", a[0], a[1]);
    return;
  default:
    if (!r->err) r->err = bg_error(BG_EINVAL, "kernel: render: no C form for op %s", ir_op_name(op));
    return;
  }
}

static char *render_value(rctx *r, kitem *it) {
  node u = it->u;
  kstr s = {0};
  if (it->kind == KI_LOAD) {
    long long slot = (long long)u->src[0]->src[0]->arg.i;
    if (it->ops[1]) kstr_printf(&s, "(%s ? data%lld[%s] : 0)", text(r, it->ops[1]), slot, text(r, it->ops[0]));
    else kstr_printf(&s, "data%lld[%s]", slot, text(r, it->ops[0]));
    return kstr_take(&s);
  }
  const char *a[3] = {"", "", ""};
  for (unsigned i = 0; i < it->nops && i < 3; i++) a[i] = text(r, it->ops[i]);
  const char *ct = ctype_of(r, u);
  if (u->op == IR_CAST) {
    render_cast(r, &s, u->dt, ct, u->src[0]->dt, a[0]);
  } else if (u->op == IR_BITCAST) {
    const char *from = ctype_of(r, u->src[0]);
    if (!strcmp(from, ct)) {
      kstr_puts(&s, a[0]);
    } else {
      kprelude_bitcast(&r->pre, from, ct);
      kstr_printf(&s, "bg_bc_%s_%s(%s)", kprelude_tag(from), kprelude_tag(ct), a[0]);
    }
  } else {
    render_alu(r, &s, (enum ir_op)u->op, u->dt, ct, u->src, a);
  }
  return kstr_take(&s);
}

/* ---- statements ---- */

static void indent(rctx *r, unsigned depth) {
  for (unsigned i = 0; i <= depth; i++) kstr_puts(&r->body, "  ");
}

static void mark_uses(kscope *sc) {
  for (kitem *it = sc->first; it; it = it->next) {
    for (unsigned i = 0; i < it->nops; i++) {
      kitem *o = it->ops[i];
      if (!o) continue;
      o->uses++;
      o->use_scope = it->scope;
    }
    node u = it->u;
    if (it->kind == KI_EXPR && it->nops >= 2) {
      int64_t k;
      enum ir_scalar s = IR_DT_SCALAR(u->dt);
      if (u->op == IR_MAX || ((u->op == IR_IDIV || u->op == IR_MOD) && div_guard(s, u->src[1])))
        it->ops[0]->no_inline = it->ops[1]->no_inline = true;
      if ((u->op == IR_SHL || u->op == IR_SHR) && !ir_is_const(u->src[1], &k)) it->ops[1]->no_inline = true;
    }
    if (it->kind == KI_UPDATE && u->arg.i == IR_MAX)
      for (unsigned i = 1; i < it->nops; i++) it->ops[i]->no_inline = true;
    if (it->kind == KI_LOOP) mark_uses(it->body);
  }
}

static void render_scope(rctx *r, kscope *sc, unsigned depth) {
  char b[96];
  for (kitem *it = sc->first; it && !r->err; it = it->next) {
    node u = it->u;
    switch (it->kind) {
    case KI_EXPR:
    case KI_LOAD: {
      char *e = render_value(r, it);
      if (!e) {
        r->err = bg_error(BG_ENOMEM, "kernel: out of memory rendering");
        return;
      }
      if (it->kind == KI_EXPR && IR_DT_SCALAR(u->dt) != IR_DT_INDEX && u->op != IR_CAST && u->op != IR_BITCAST)
        r->flops += sc->iters;
      if (it->uses == 1 && it->use_scope == sc && !it->no_inline && strlen(e) <= INLINE_MAX) {
        it->text = e;
        break;
      }
      snprintf(b, sizeof b, "v%u", r->nv++);
      indent(r, depth);
      kstr_printf(&r->body, "%s %s = %s;\n", ctype_of(r, u), b, e);
      free(e);
      it->named = true;
      it->text = dupstr(b);
      break;
    }
    case KI_STORE: {
      long long slot = (long long)u->src[0]->src[0]->arg.i;
      indent(r, depth);
      if (it->ops[1]) kstr_printf(&r->body, "if (%s) ", text(r, it->ops[1]));
      kstr_printf(&r->body, "data%lld[%s] = %s;\n", slot, text(r, it->ops[0]), text(r, it->ops[2]));
      break;
    }
    case KI_ACC: {
      char id[64];
      identity(id, sizeof id, u->arg.i, IR_DT_SCALAR(u->dt));
      snprintf(b, sizeof b, "acc%u", r->nacc++);
      indent(r, depth);
      kstr_printf(&r->body, "%s %s = %s;\n", ctype_of(r, u), b, id);
      it->named = true;
      it->text = dupstr(b);
      break;
    }
    case KI_UPDATE: {
      const char *ct = ctype_of(r, u);
      for (unsigned i = 1; i < it->nops; i++) {
        const char *a[2] = {text(r, it->ops[0]), text(r, it->ops[i])};
        node src[2] = {NULL, it->ops[i]->u};
        kstr e = {0};
        render_alu(r, &e, (enum ir_op)u->arg.i, u->dt, ct, src, a);
        char *t = kstr_take(&e);
        if (!t) {
          if (!r->err) r->err = bg_error(BG_ENOMEM, "kernel: out of memory rendering");
          return;
        }
        indent(r, depth);
        kstr_printf(&r->body, "%s = %s;\n", a[0], t);
        free(t);
        r->flops += sc->iters;
      }
      break;
    }
    case KI_LOOP: {
      const char *ct = fits32(r, u->src[0]) ? "int" : "int64_t";
      snprintf(b, sizeof b, "ridx%lld", (long long)kr_axis(u));
      if (!(it->text = dupstr(b))) break;
      indent(r, depth);
      if (it == r->grid->grid_loop) {   /* the CPU grid: this work-group's chunk of the loop (klin_plan_cpu_grid) */
        long long ch = (long long)r->grid->grid_chunk, e = (long long)r->grid->grid_extent;
        kstr_printf(&r->body, "const %s %s_lo = (%s)gid[0] * %lld;\n", ct, b, ct, ch);
        indent(r, depth);
        if (e % ch == 0) kstr_printf(&r->body, "const %s %s_hi = %s_lo + %lld;\n", ct, b, b, ch);
        else kstr_printf(&r->body, "const %s %s_hi = %s_lo + %lld < %lld ? %s_lo + %lld : %lld;\n", ct, b, b, ch, e, b, ch, e);
        indent(r, depth);
        kstr_printf(&r->body, "for (%s %s = %s_lo; %s < %s_hi; %s++) {\n", ct, b, b, b, b, b);
      } else {
        kstr_printf(&r->body, "for (%s %s = 0; %s < %s; %s++) {\n", ct, b, b, text(r, it->ops[0]), b);
      }
      render_scope(r, it->body, depth + 1);
      indent(r, depth);
      kstr_puts(&r->body, "}\n");
      break;
    }
    case KI_LEAF: break;
    }
    if ((it->kind != KI_STORE && it->kind != KI_UPDATE && !it->text) || r->body.oom) {
      if (!r->err) r->err = bg_error(BG_ENOMEM, "kernel: out of memory rendering");
      return;
    }
  }
}

int krender_c(ir_ctx *ctx, const kinfo *info, klin *l, const char *name, char **src, uint64_t *flops) {
  rctx r = {.ctx = ctx, .info = info, .grid = l};
  *src = NULL;
  mark_uses(l->root);
  render_scope(&r, l->root, 0);
  if (r.err) {
    kstr_free(&r.body);
    return r.err;
  }
  kstr out = {0};
  kprelude_emit(&out, &r.pre);
  kstr_printf(&out, "void %s(const void *args, const uint32_t gid[3], const uint32_t gsz[3], const uint32_t lsz[3]) {\n", name);
  kstr_puts(&out, "  (void)gid;\n  (void)gsz;\n  (void)lsz;\n");
  for (unsigned i = 0; i < info->nbufs; i++) {
    const char *ct = scalar_ctype(IR_DT_SCALAR(info->buf_dt[i])), *cq = info->buf_written[i] ? "" : "const ";
    kstr_printf(&out, "  %s%s *restrict data%u = (%s%s *)(uintptr_t)((const uint64_t *)args)[%u];\n  (void)data%u;\n", cq,
                ct, i, cq, ct, i, i);
  }
  for (unsigned i = 0; i < info->nvars; i++) {
    const ir_var_info *vi = ir_var_get(info->vars[i]);
    char nm[40] = "";
    for (size_t k = 0; vi && vi->name[k] && k + 1 < sizeof nm; k++)
      nm[k] = (char)(vi->name[k] == '*' || vi->name[k] == '/' || (unsigned char)vi->name[k] < 0x20 ? '_' : vi->name[k]);
    kstr_printf(&out, "  int32_t var%u; /* %s */\n  memcpy(&var%u, (const char *)args + %u, sizeof var%u);\n  (void)var%u;\n", i, nm,
                i, 8u * info->nbufs + 4u * i, i, i);
  }
  if (r.body.p) kstr_puts(&out, r.body.p);
  kstr_puts(&out, "}\n");
  kstr_free(&r.body);
  *src = kstr_take(&out);
  if (!*src) return bg_error(BG_ENOMEM, "kernel: out of memory rendering");
  *flops = r.flops;
  return 0;
}
