/* ir/ir_bounds.c: ir_vmin/ir_vmax, sound interval bounds of integer/bool expressions.
 *
 * The bounds hold for the value the expression actually takes under ir_eval's wrapping
 * semantics: every op computes the exact mathematical interval (overflow-checked in int64) and
 * falls back to the dtype's full range whenever that interval leaves the dtype, because then the
 * value may have wrapped. uint64 values do not fit int64 ordering, so they are always "unknown"
 * (the full int64 range). Results are memoised per node id in the context. */
#include <stdlib.h>

#include "ir/ir_internal.h"

typedef struct rng {
  int64_t lo, hi;
} rng;

static rng dt_full(ir_dtype dt) {
  rng r;
  ir_dtype_range(dt, &r.lo, &r.hi);
  return r;
}

/* [lo, hi] if it was computed without int64 overflow and lies within dt, else dt's range. */
static rng fit(ir_dtype dt, bool ok, int64_t lo, int64_t hi) {
  rng d = dt_full(dt);
  if (!ok || lo < d.lo || hi > d.hi || lo > hi) return d;
  return (rng){lo, hi};
}

static int64_t min2(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max2(int64_t a, int64_t b) { return a > b ? a : b; }

/* min/max over 4 corner values */
static rng corners(const int64_t c[4]) {
  rng r = {c[0], c[0]};
  for (int i = 1; i < 4; i++) {
    r.lo = min2(r.lo, c[i]);
    r.hi = max2(r.hi, c[i]);
  }
  return r;
}

static uint64_t mag(int64_t x) { return x < 0 ? 0u - (uint64_t)x : (uint64_t)x; }

/* Smallest 2^k - 1 >= x for x >= 0. */
static int64_t fill_bits(int64_t x) {
  uint64_t m = (uint64_t)x;
  for (unsigned s = 1; s < 64; s <<= 1) m |= m >> s;
  return (int64_t)m;
}

static int64_t shr_arith(int64_t a, unsigned k) { return a < 0 ? ~(int64_t)((~(uint64_t)a) >> k) : (int64_t)((uint64_t)a >> k); }

static rng b_mul(ir_dtype dt, rng a, rng b) {
  int64_t c[4];
  /* | not ||: every corner must be computed */
  bool ov = (int)__builtin_mul_overflow(a.lo, b.lo, &c[0]) | (int)__builtin_mul_overflow(a.lo, b.hi, &c[1]) |
            (int)__builtin_mul_overflow(a.hi, b.lo, &c[2]) | (int)__builtin_mul_overflow(a.hi, b.hi, &c[3]);
  rng r = corners(c);
  return fit(dt, !ov, r.lo, r.hi);
}

static rng b_idiv(ir_dtype dt, rng a, rng b) {
  if (b.lo > 0 || b.hi < 0) {
    /* trunc(a/b) is monotone in each argument on a rectangle avoiding b == 0: extremes at corners */
    if ((a.lo == INT64_MIN) && (b.lo == -1 || b.hi == -1)) return dt_full(dt);
    int64_t c[4] = {a.lo / b.lo, a.lo / b.hi, a.hi / b.lo, a.hi / b.hi};
    rng r = corners(c);
    return fit(dt, true, r.lo, r.hi);
  }
  /* divisor may take either sign (zero itself is an error): |a/b| <= |a| */
  if (a.lo == INT64_MIN) return dt_full(dt);
  int64_t m = max2(-a.lo, a.hi);
  m = max2(m, max2(a.lo, -a.hi));
  return fit(dt, true, -m, m);
}

static rng b_mod(ir_dtype dt, rng a, rng b) {
  uint64_t bmax = mag(b.lo) > mag(b.hi) ? mag(b.lo) : mag(b.hi);
  if (bmax == 0) return dt_full(dt); /* always division by zero */
  if (b.lo > 0 || b.hi < 0) {
    uint64_t bmin = mag(b.lo) < mag(b.hi) ? mag(b.lo) : mag(b.hi);
    /* |a| < every |divisor|: the remainder is a itself */
    if (a.lo >= 0 && (uint64_t)a.hi < bmin) return fit(dt, true, a.lo, a.hi);
    if (a.hi <= 0 && mag(a.lo) < bmin) return fit(dt, true, a.lo, a.hi);
  }
  int64_t m = (int64_t)(bmax - 1u); /* |remainder| <= |divisor| - 1, sign of the dividend */
  int64_t lo = a.lo >= 0 ? 0 : max2(a.lo, -m), hi = a.hi <= 0 ? 0 : min2(a.hi, m);
  return fit(dt, true, lo, hi);
}

static rng b_shift(ir_dtype dt, enum ir_op op, rng a, rng b) {
  unsigned w = ir_dtype_bits(dt);
  if (b.lo < 0 || b.hi >= (int64_t)w || b.hi > 62) return dt_full(dt);
  int64_t c[4];
  bool ov = false;
  const int64_t ks[2] = {b.lo, b.hi}, as[2] = {a.lo, a.hi};
  for (int i = 0; i < 4; i++) {
    int64_t x = as[i >> 1];
    unsigned k = (unsigned)ks[i & 1];
    if (op == IR_SHL) ov |= (int)__builtin_mul_overflow(x, INT64_C(1) << k, &c[i]);
    else c[i] = shr_arith(x, k); /* unsigned values are non-negative, where this is logical */
  }
  rng r = corners(c);
  return fit(dt, !ov, r.lo, r.hi);
}

static rng b_bits(ir_dtype dt, enum ir_op op, rng a, rng b) {
  bool an = a.lo >= 0, bn = b.lo >= 0;
  switch (op) {
  case IR_AND:
    if (an && bn) return fit(dt, true, a.lo == a.hi && b.lo == b.hi ? (a.lo & b.lo) : 0, min2(a.hi, b.hi));
    if (an || bn) return fit(dt, true, 0, an ? a.hi : b.hi); /* result bits are a subset of the mask's */
    break;
  case IR_OR:
    if (an && bn) return fit(dt, true, max2(a.lo, b.lo), fill_bits(max2(a.hi, b.hi)));
    break;
  case IR_XOR:
    if (an && bn) return fit(dt, true, 0, fill_bits(max2(a.hi, b.hi)));
    break;
  default: break;
  }
  return dt_full(dt);
}

static rng b_cmp(enum ir_op op, rng a, rng b) {
  bool disjoint = a.hi < b.lo || b.hi < a.lo, same = a.lo == a.hi && b.lo == b.hi && a.lo == b.lo;
  switch (op) {
  case IR_CMPLT:
    if (a.hi < b.lo) return (rng){1, 1};
    if (a.lo >= b.hi) return (rng){0, 0};
    break;
  case IR_CMPNE:
    if (disjoint || same) return (rng){disjoint, disjoint};
    break;
  default: /* CMPEQ */
    if (disjoint || same) return (rng){same, same};
    break;
  }
  return (rng){0, 1};
}

static rng b_cast(ir_dtype dt, const ir_node *src, rng a) {
  if (!ir_dt_is_intlike(src->dt) || IR_DT_SCALAR(src->dt) == IR_DT_UINT64) return dt_full(dt);
  if (IR_DT_SCALAR(dt) == IR_DT_BOOL) {
    if (a.lo > 0 || a.hi < 0) return (rng){1, 1};
    if (a.lo == 0 && a.hi == 0) return (rng){0, 0};
    return (rng){0, 1};
  }
  return fit(dt, true, a.lo, a.hi); /* values that fit the target survive the truncation unchanged */
}

static rng get(const ir_ctx *ctx, const ir_node *n) { return (rng){ctx->bnd[n->id].lo, ctx->bnd[n->id].hi}; }

/* Bounds of u from its sources' (already memoised) bounds. */
static rng compute(const ir_ctx *ctx, const ir_node *u) {
  const ir_dtype dt = u->dt;
  const enum ir_op op = (enum ir_op)u->op;
  rng d = dt_full(dt), a = d, b = d;
  if (!ir_dt_is_intlike(dt) || IR_DT_SCALAR(dt) == IR_DT_UINT64) return d;
  if (u->nsrc >= 1) a = get(ctx, u->src[0]);
  if (u->nsrc >= 2) b = get(ctx, u->src[1]);
  int64_t lo, hi;
  switch (op) {
  case IR_CONST: return (rng){ir_norm(dt, u->arg.i), ir_norm(dt, u->arg.i)};
  case IR_DEFINE_VAR: {
    const ir_var_info *vi = ir_var_get(u);
    if (!vi) return d;
    lo = max2(vi->min, d.lo);
    hi = min2(vi->max, d.hi);
    return lo <= hi ? (rng){lo, hi} : d;
  }
  case IR_RANGE:
  case IR_SPECIAL: return fit(dt, true, 0, a.hi >= 1 ? a.hi - 1 : 0); /* 0 .. extent-1 */
  case IR_ADD: {
    bool ov = (int)__builtin_add_overflow(a.lo, b.lo, &lo) | (int)__builtin_add_overflow(a.hi, b.hi, &hi);
    return fit(dt, !ov, lo, hi);
  }
  case IR_SUB: {
    bool ov = (int)__builtin_sub_overflow(a.lo, b.hi, &lo) | (int)__builtin_sub_overflow(a.hi, b.lo, &hi);
    return fit(dt, !ov, lo, hi);
  }
  case IR_NEG: {
    bool ov = (int)__builtin_sub_overflow(0, a.hi, &lo) | (int)__builtin_sub_overflow(0, a.lo, &hi);
    return fit(dt, !ov, lo, hi);
  }
  case IR_MUL: return b_mul(dt, a, b);
  case IR_IDIV: return b_idiv(dt, a, b);
  case IR_MOD: return b_mod(dt, a, b);
  case IR_MAX: return fit(dt, true, max2(a.lo, b.lo), max2(a.hi, b.hi));
  case IR_CMPLT:
  case IR_CMPNE:
  case IR_CMPEQ: return b_cmp(op, a, b);
  case IR_AND:
  case IR_OR:
  case IR_XOR: return b_bits(dt, op, a, b);
  case IR_SHL:
  case IR_SHR: return b_shift(dt, op, a, b);
  case IR_WHERE: {
    rng c = get(ctx, u->src[2]);
    if (a.lo == a.hi) return a.lo ? b : c;
    return fit(dt, true, min2(b.lo, c.lo), max2(b.hi, c.hi));
  }
  case IR_CAST: return b_cast(dt, u->src[0], a);
  case IR_BITCAST:
    if (ir_dtype_bits(u->src[0]->dt) == ir_dtype_bits(dt) &&
        ir_scalar_is_signed(IR_DT_SCALAR(u->src[0]->dt)) == ir_scalar_is_signed(IR_DT_SCALAR(dt)))
      return fit(dt, true, a.lo, a.hi);
    return d;
  default: return d;
  }
}

/* Memoises the bounds of u and everything below it that is not known yet; iterative. */
static bool ensure(ir_ctx *ctx, const ir_node *u) {
  if (u->id < ctx->bnd_cap && ctx->bnd[u->id].known) return true;
  if (!ir_grow((void **)&ctx->bnd, &ctx->bnd_cap, ctx->nnodes, sizeof *ctx->bnd)) return false;
  const ir_node **st = NULL;
  size_t cap = 0, sp = 0;
  if (!ir_grow((void **)&st, &cap, 1, sizeof *st)) return false;
  st[sp++] = u;
  while (sp) {
    const ir_node *x = st[sp - 1];
    if (ctx->bnd[x->id].known) {
      sp--;
      continue;
    }
    bool pending = false;
    for (unsigned i = 0; i < x->nsrc; i++) {
      if (ctx->bnd[x->src[i]->id].known) continue;
      if (!ir_grow((void **)&st, &cap, sp + 1, sizeof *st)) {
        free(st);
        return false;
      }
      st[sp++] = x->src[i];
      pending = true;
    }
    if (pending) continue;
    rng r = compute(ctx, x);
    ctx->bnd[x->id] = (ir_bnd){r.lo, r.hi, true};
    sp--;
  }
  free(st);
  return true;
}

int64_t ir_vmin(ir_ctx *ctx, const ir_node *u) {
  if (!ensure(ctx, u)) return dt_full(u->dt).lo; /* out of memory: still a sound answer */
  return ctx->bnd[u->id].lo;
}

int64_t ir_vmax(ir_ctx *ctx, const ir_node *u) {
  if (!ensure(ctx, u)) return dt_full(u->dt).hi;
  return ctx->bnd[u->id].hi;
}
