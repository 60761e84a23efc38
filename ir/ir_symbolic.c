/* ir/ir_symbolic.c: ir_symbolic_rules and ir_simplify.
 *
 * Every rule must hold for all values under ir_eval's semantics (wrapping, C truncating division);
 * the property test in tests/unit/ir checks that on random expressions. Two kinds of reasoning:
 *  - ring identities (reassociation, distribution, x-y -> x+y*-1) hold modulo 2^width, so they are
 *    sound with wrapping on any integer dtype (not bool, which is not a ring);
 *  - division/remainder identities hold only on exact integers, so they first prove from vmin/vmax
 *    that the operands' arithmetic cannot wrap, and they keep C truncation's sign conditions.
 * uint64 values are not ordered as int64, so bound-based rules skip them. Like any simplifier this
 * assumes no division by zero happens: x*0 -> 0 drops a failing x, bounds may decide x//y. */
#include <stdlib.h>

#include "ir/ir_internal.h"

typedef const ir_node *node;

/* ---- helpers ---- */

static bool scalar_intlike(node u) { return ir_dt_is_intlike(u->dt) && IR_DT_LANES(u->dt) == 1; }
/* integer arithmetic rules: not bool */
static bool ring(node u) { return scalar_intlike(u) && IR_DT_SCALAR(u->dt) != IR_DT_BOOL; }
/* rules that read vmin/vmax */
static bool ranged(node u) { return scalar_intlike(u) && IR_DT_SCALAR(u->dt) != IR_DT_UINT64; }
static bool is_signed(node u) { return ir_scalar_is_signed(IR_DT_SCALAR(u->dt)); }
static bool cval(node u, int64_t *v) { return ir_is_const(u, v); }
static bool is_k(node u, int64_t k) {
  int64_t v;
  return cval(u, &v) && v == k;
}

static node K(ir_ctx *ctx, ir_dtype dt, int64_t v) { return ir_const_int(ctx, dt, v); }
static node A2(ir_ctx *ctx, enum ir_op op, node a, node b) { return ir_alu2(ctx, op, a, b); }
/* wrapping arithmetic on constants of a dtype (ir_const_int truncates) */
static int64_t wadd(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }
static int64_t wmul(int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); }

static bool fits(ir_dtype dt, int64_t lo, int64_t hi) {
  int64_t dlo, dhi;
  ir_dtype_range(dt, &dlo, &dhi);
  return lo >= dlo && hi <= dhi;
}

/* Exact bounds of a*k when that product provably does not wrap in dt. */
static bool mul_exact(ir_ctx *ctx, node a, int64_t k, ir_dtype dt, int64_t *lo, int64_t *hi) {
  int64_t p, q;
  if (__builtin_mul_overflow(ir_vmin(ctx, a), k, &p) || __builtin_mul_overflow(ir_vmax(ctx, a), k, &q)) return false;
  *lo = p < q ? p : q;
  *hi = p < q ? q : p;
  return fits(dt, *lo, *hi);
}

/* Exact bounds of a+b (given bounds) when the sum provably does not wrap in dt. */
static bool add_exact(ir_dtype dt, int64_t alo, int64_t ahi, int64_t blo, int64_t bhi, int64_t *lo, int64_t *hi) {
  if (__builtin_add_overflow(alo, blo, lo) || __builtin_add_overflow(ahi, bhi, hi)) return false;
  return fits(dt, *lo, *hi);
}

static bool commutative(enum ir_op op) {
  return op == IR_ADD || op == IR_MUL || op == IR_MAX || op == IR_AND || op == IR_OR || op == IR_XOR ||
         op == IR_CMPNE || op == IR_CMPEQ;
}

static bool is_alu(node u) {
  enum ir_op_group g = ir_op_group((enum ir_op)u->op);
  return g == IR_G_ALU1 || g == IR_G_ALU2 || g == IR_G_ALU3;
}

/* ---- canonical form, folding, bounds ---- */

/* Commutative operands: constant last, otherwise by id, so a+b and b+a intern to one node. */
static node r_commute(ir_rewriter *rw, node u) {
  if (!commutative((enum ir_op)u->op) || u->nsrc != 2 || !ir_dt_is_intlike(u->src[0]->dt)) return NULL;
  node a = u->src[0], b = u->src[1];
  bool ka = cval(a, NULL), kb = cval(b, NULL);
  if ((ka && !kb) || (ka == kb && !ka && a->id > b->id)) return A2(ir_rw_ctx(rw), (enum ir_op)u->op, b, a);
  return NULL;
}

static node r_fold(ir_rewriter *rw, node u) {
  int64_t v[3] = {0, 0, 0}, out;
  if (!is_alu(u) || u->nsrc > 3 || !scalar_intlike(u)) return NULL;
  for (unsigned i = 0; i < u->nsrc; i++)
    if (!cval(u->src[i], &v[i])) return NULL;
  if (ir_eval_alu((enum ir_op)u->op, u->dt, u->src[0]->dt, v, &out) != IR_EV_OK) return NULL;
  return K(ir_rw_ctx(rw), u->dt, out);
}

/* An ALU value confined to one number is that number. */
static node r_singleton(ir_rewriter *rw, node u) {
  if (!is_alu(u) || !ranged(u)) return NULL;
  ir_ctx *ctx = ir_rw_ctx(rw);
  int64_t lo = ir_vmin(ctx, u);
  return lo == ir_vmax(ctx, u) ? K(ctx, u->dt, lo) : NULL;
}

/* ---- identities ---- */

static node r_identity(ir_rewriter *rw, node u) {
  if (u->nsrc != 2 || !scalar_intlike(u) || !ir_dt_is_intlike(u->src[0]->dt)) return NULL;
  ir_ctx *ctx = ir_rw_ctx(rw);
  node x = u->src[0], y = u->src[1];
  const bool rg = ring(u);
  switch ((enum ir_op)u->op) {
  case IR_ADD:
  case IR_OR:
  case IR_XOR:
  case IR_SHL:
  case IR_SHR:
    if (is_k(y, 0) && (rg || u->op == IR_OR || u->op == IR_XOR)) return x;
    if (x == y && u->op == IR_OR) return x;
    if (x == y && u->op == IR_XOR) return K(ctx, u->dt, 0);
    break;
  case IR_MUL:
    if (rg && is_k(y, 1)) return x;
    if (rg && is_k(y, 0)) return y;
    break;
  case IR_SUB:
    if (rg && x == y) return K(ctx, u->dt, 0);
    break;
  case IR_IDIV:
    if (rg && is_k(y, 1)) return x;
    break;
  case IR_MOD:
    if (rg && (is_k(y, 1) || (is_signed(u) && is_k(y, -1)))) return K(ctx, u->dt, 0);
    break;
  case IR_MAX:
    if (x == y) return x;
    if (ranged(x)) {
      if (ir_vmin(ctx, x) >= ir_vmax(ctx, y)) return x;
      if (ir_vmin(ctx, y) >= ir_vmax(ctx, x)) return y;
    }
    break;
  case IR_AND: {
    int64_t m;
    if (x == y) return x;
    if (is_k(y, 0)) return y;
    if (cval(y, &m) && m == ir_norm(u->dt, -1)) return x;
    /* x & m == x when x is non-negative and m covers every bit x can have */
    if (cval(y, &m) && ranged(u) && ir_vmin(ctx, x) >= 0) {
      int64_t need = 0, hi = ir_vmax(ctx, x);
      while (need < hi) need = need * 2 + 1;
      if ((m & need) == need) return x;
    }
    break;
  }
  case IR_CMPLT:
  case IR_CMPNE:
    if (x == y) return K(ctx, u->dt, 0);
    if (u->op == IR_CMPNE && IR_DT_SCALAR(x->dt) == IR_DT_BOOL && is_k(y, 0)) return x;
    break;
  case IR_CMPEQ:
    if (x == y) return K(ctx, u->dt, 1);
    if (IR_DT_SCALAR(x->dt) == IR_DT_BOOL && is_k(y, 1)) return x;
    break;
  default: break;
  }
  return NULL;
}

static node r_where_cast(ir_rewriter *rw, node u) {
  (void)rw;
  int64_t c;
  if (u->op == IR_WHERE && u->nsrc == 3) {
    if (u->src[1] == u->src[2]) return u->src[1];
    if (cval(u->src[0], &c)) return c ? u->src[1] : u->src[2];
    if (IR_DT_SCALAR(u->dt) == IR_DT_BOOL && u->src[0]->dt == u->dt && is_k(u->src[1], 1) && is_k(u->src[2], 0))
      return u->src[0];
    return NULL;
  }
  if (u->op != IR_CAST || u->nsrc != 1) return NULL;
  node x = u->src[0];
  if (x->dt == u->dt) return x;
  /* cast back through a cast that lost nothing: every value of y's dtype fits x's */
  if (x->op == IR_CAST && x->src[0]->dt == u->dt && ranged(x) && ranged(x->src[0])) {
    int64_t lo, hi;
    ir_dtype_range(x->src[0]->dt, &lo, &hi);
    if (fits(x->dt, lo, hi)) return x->src[0];
  }
  return NULL;
}

/* ---- ring rules (mod 2^width) ---- */

/* x as c*base: (base, c) for MUL(base, const), (x, 1) otherwise; constants are not terms. */
static bool term(node x, node *base, int64_t *c) {
  if (cval(x, NULL)) return false;
  if (x->op == IR_MUL && cval(x->src[1], c)) {
    *base = x->src[0];
    return true;
  }
  *base = x;
  *c = 1;
  return true;
}

/* Merges like terms x, y (same base) into base*(cx+cy); NULL if they are not alike. */
static node merge_terms(ir_ctx *ctx, node x, node y) {
  node bx, by;
  int64_t cx, cy;
  if (!term(x, &bx, &cx) || !term(y, &by, &cy) || bx != by) return NULL;
  return A2(ctx, IR_MUL, bx, K(ctx, x->dt, wadd(cx, cy)));
}

static node r_ring(ir_rewriter *rw, node u) {
  if (!ring(u) || u->nsrc < 1) return NULL;
  ir_ctx *ctx = ir_rw_ctx(rw);
  const ir_dtype dt = u->dt;
  node x = u->src[0], y = u->nsrc > 1 ? u->src[1] : NULL;
  int64_t c1, c2;
  switch ((enum ir_op)u->op) {
  case IR_NEG: return A2(ctx, IR_MUL, x, K(ctx, dt, -1));
  case IR_SUB:
    if (cval(y, &c2)) return A2(ctx, IR_ADD, x, K(ctx, dt, wmul(c2, -1)));
    return A2(ctx, IR_ADD, x, A2(ctx, IR_MUL, y, K(ctx, dt, -1)));
  case IR_ADD: {
    node m;
    bool ky = cval(y, &c2);
    if (x->op == IR_ADD && cval(x->src[1], &c1)) {
      if (ky) return A2(ctx, IR_ADD, x->src[0], K(ctx, dt, wadd(c1, c2))); /* (x+c1)+c2 */
      return A2(ctx, IR_ADD, A2(ctx, IR_ADD, x->src[0], y), x->src[1]);     /* (x+c)+y: constant outwards */
    }
    if (!ky && y->op == IR_ADD && cval(y->src[1], &c1))
      return A2(ctx, IR_ADD, A2(ctx, IR_ADD, x, y->src[0]), y->src[1]);
    if ((m = merge_terms(ctx, x, y))) return m;                            /* x*c + x*d */
    if (x->op == IR_ADD) {                                                   /* (z+t)+y with t~y or z~y */
      if ((m = merge_terms(ctx, x->src[1], y))) return A2(ctx, IR_ADD, x->src[0], m);
      if ((m = merge_terms(ctx, x->src[0], y))) return A2(ctx, IR_ADD, m, x->src[1]);
    }
    return NULL;
  }
  case IR_MUL:
    if (!cval(y, &c2)) return NULL;
    if (x->op == IR_MUL && cval(x->src[1], &c1)) return A2(ctx, IR_MUL, x->src[0], K(ctx, dt, wmul(c1, c2)));
    if (x->op == IR_ADD && cval(x->src[1], &c1))
      return A2(ctx, IR_ADD, A2(ctx, IR_MUL, x->src[0], y), K(ctx, dt, wmul(c1, c2)));
    return NULL;
  default: return NULL;
  }
}

/* ---- division and remainder by a constant ---- */

enum { MAX_TERMS = 32 };

/* Flattens the ADD tree of x into terms, succeeding only if no ADD in it can wrap (so the value
 * is the exact sum of its terms). */
static bool flatten(ir_ctx *ctx, node x, node *terms, int *n) {
  if (x->op != IR_ADD) {
    if (*n >= MAX_TERMS) return false;
    terms[(*n)++] = x;
    return true;
  }
  int64_t lo, hi;
  if (!add_exact(x->dt, ir_vmin(ctx, x->src[0]), ir_vmax(ctx, x->src[0]), ir_vmin(ctx, x->src[1]),
                 ir_vmax(ctx, x->src[1]), &lo, &hi))
    return false;
  return flatten(ctx, x->src[0], terms, n) && flatten(ctx, x->src[1], terms, n);
}

/* t's value is exactly a multiple of c (c > 0). */
static bool multiple(ir_ctx *ctx, node t, int64_t c) {
  int64_t v, lo, hi;
  if (cval(t, &v)) return v % c == 0;
  return t->op == IR_MUL && cval(t->src[1], &v) && v % c == 0 && mul_exact(ctx, t->src[0], v, t->dt, &lo, &hi);
}

/* Exact bounds of the sum of terms; false if some partial sum may wrap. */
static bool sum_bounds(ir_ctx *ctx, node *t, int n, int64_t *lo, int64_t *hi) {
  *lo = ir_vmin(ctx, t[0]);
  *hi = ir_vmax(ctx, t[0]);
  for (int i = 1; i < n; i++)
    if (!add_exact(t[0]->dt, *lo, *hi, ir_vmin(ctx, t[i]), ir_vmax(ctx, t[i]), lo, hi)) return false;
  return true;
}

static node sum_terms(ir_ctx *ctx, node *t, int n) {
  node s = t[0];
  for (int i = 1; i < n; i++) s = A2(ctx, IR_ADD, s, t[i]);
  return s;
}

/* x = D + R with D the terms divisible by c. When the split is exact and R has the sign of x
 * (C truncation only distributes over same-sign parts), sets *dsum and *rest (NULL if R is empty). */
static bool split_multiple(ir_ctx *ctx, node x, int64_t c, node *dsum, node *rest) {
  node terms[MAX_TERMS], d[MAX_TERMS], r[MAX_TERMS];
  int n = 0, nd = 0, nr = 0;
  if (x->op != IR_ADD || !flatten(ctx, x, terms, &n)) return false;
  for (int i = 0; i < n; i++) {
    if (multiple(ctx, terms[i], c)) d[nd++] = terms[i];
    else r[nr++] = terms[i];
  }
  int64_t lo, hi, rlo = 0, rhi = 0;
  if (nd == 0 || !sum_bounds(ctx, d, nd, &lo, &hi) || (nr && !sum_bounds(ctx, r, nr, &rlo, &rhi))) return false;
  int64_t xlo = ir_vmin(ctx, x), xhi = ir_vmax(ctx, x);
  if (nr && !((xlo >= 0 && rlo >= 0) || (xhi <= 0 && rhi <= 0))) return false;
  *dsum = sum_terms(ctx, d, nd);
  *rest = nr ? sum_terms(ctx, r, nr) : NULL;
  return *dsum && (!nr || *rest);
}

static node r_divmod(ir_rewriter *rw, node u) {
  int64_t c, d, lo, hi;
  if ((u->op != IR_IDIV && u->op != IR_MOD) || !ring(u) || !ranged(u) || !cval(u->src[1], &c)) return NULL;
  ir_ctx *ctx = ir_rw_ctx(rw);
  const ir_dtype dt = u->dt;
  node x = u->src[0];
  int64_t dmin, dmax;
  ir_dtype_range(dt, &dmin, &dmax);
  if (c == 0) return NULL;
  if (c < 0) {
    /* C truncation: x / c == -(x / -c), x % c == x % -c */
    if (c == dmin) return NULL;
    if (u->op == IR_MOD) return A2(ctx, IR_MOD, x, K(ctx, dt, -c));
    return A2(ctx, IR_MUL, A2(ctx, IR_IDIV, x, K(ctx, dt, -c)), K(ctx, dt, -1));
  }
  node dsum, rest;
  if (u->op == IR_IDIV) {
    /* (y / d) / c == y / (d*c) for positive d, c: holds for floor and hence for truncation */
    if (x->op == IR_IDIV && cval(x->src[1], &d) && d > 0 && !__builtin_mul_overflow(d, c, &lo) && lo <= dmax)
      return A2(ctx, IR_IDIV, x->src[0], K(ctx, dt, lo));
    if (x->op == IR_MUL && cval(x->src[1], &d) && mul_exact(ctx, x->src[0], d, dt, &lo, &hi)) {
      if (d % c == 0) return A2(ctx, IR_MUL, x->src[0], K(ctx, dt, d / c));     /* (a*d)/c, c | d */
      if (d > 0 && c % d == 0) return A2(ctx, IR_IDIV, x->src[0], K(ctx, dt, c / d)); /* (a*d)/(d*k) */
    }
    /* (D + R) / c == D/c + R/c when c | D and R has x's sign; all-multiple sums: r_div_exact */
    if (split_multiple(ctx, x, c, &dsum, &rest) && rest)
      return A2(ctx, IR_ADD, A2(ctx, IR_IDIV, dsum, u->src[1]), A2(ctx, IR_IDIV, rest, u->src[1]));
    return NULL;
  }
  /* MOD, c > 0 */
  if (multiple(ctx, x, c)) return K(ctx, dt, 0);
  /* the whole range has one quotient q: x % c == x - q*c */
  int64_t q0 = ir_vmin(ctx, x) / c, q1 = ir_vmax(ctx, x) / c;
  if (q0 == q1) return q0 == 0 ? x : A2(ctx, IR_ADD, x, K(ctx, dt, -(q0 * c)));
  if (x->op == IR_MOD && cval(x->src[1], &d) && d > 0 && d % c == 0) return A2(ctx, IR_MOD, x->src[0], u->src[1]);
  /* (a*d) % (d*k) == (a % k) * d: the remainder keeps a*d's sign */
  if (x->op == IR_MUL && cval(x->src[1], &d) && d > 0 && c % d == 0 && mul_exact(ctx, x->src[0], d, dt, &lo, &hi))
    return A2(ctx, IR_MUL, A2(ctx, IR_MOD, x->src[0], K(ctx, dt, c / d)), x->src[1]);
  if (split_multiple(ctx, x, c, &dsum, &rest)) return rest ? A2(ctx, IR_MOD, rest, u->src[1]) : K(ctx, dt, 0);
  return NULL;
}

/* A sum whose terms are all multiples of c divides term by term (each division is exact). */
static node r_div_exact(ir_rewriter *rw, node u) {
  int64_t c;
  if (u->op != IR_IDIV || !ring(u) || !ranged(u) || !cval(u->src[1], &c) || c <= 0) return NULL;
  ir_ctx *ctx = ir_rw_ctx(rw);
  node x = u->src[0], terms[MAX_TERMS], s = NULL;
  int n = 0;
  if (x->op != IR_ADD || !flatten(ctx, x, terms, &n)) return NULL;
  for (int i = 0; i < n; i++)
    if (!multiple(ctx, terms[i], c)) return NULL;
  for (int i = 0; i < n; i++) {
    node q = A2(ctx, IR_IDIV, terms[i], u->src[1]);
    s = s ? A2(ctx, IR_ADD, s, q) : q;
  }
  return s;
}

/* (x / c) * c + x % c == x: C's division identity, also under wrapping. */
static node r_divmod_recombine(ir_rewriter *rw, node u) {
  (void)rw;
  int64_t c;
  if (u->op != IR_ADD || !ring(u)) return NULL;
  for (int k = 0; k < 2; k++) {
    node m = u->src[k], r = u->src[1 - k];
    if (m->op == IR_MUL && r->op == IR_MOD && m->src[0]->op == IR_IDIV && m->src[1] == r->src[1] &&
        m->src[0]->src[1] == r->src[1] && m->src[0]->src[0] == r->src[0] && cval(r->src[1], &c) && c != 0)
      return r->src[0];
  }
  return NULL;
}

static const ir_rule symbolic_rules[] = {
    r_commute, r_fold, r_singleton, r_identity, r_where_cast, r_ring, r_divmod_recombine, r_div_exact, r_divmod,
};

const ir_rule_set ir_symbolic_rules = {"symbolic", sizeof symbolic_rules / sizeof symbolic_rules[0], symbolic_rules};

const ir_node *ir_simplify(ir_ctx *ctx, const ir_node *u) {
  const ir_rule_set *sets[1] = {&ir_symbolic_rules};
  return ir_rewrite(ctx, u, sets, 1, NULL);
}
