/* tensor/tunary.c: the elementwise math of tensor.h's "more elementwise math" section, composed from the
 * node builders of tgraph.c the way tinygrad's Tensor methods compose them (tinygrad/tensor.py), so
 * autograd (autograd_rules.c) differentiates each through its parts and nothing new reaches the compilers:
 *   cos = sin(pi/2 - x), tan = sin/cos, sigmoid = 1/(1 + exp2(-x/ln2)), tanh = 2*sigmoid(2x) - 1,
 *   erf = sign(x) * (1 - t*P(t)*exp(-x^2)), t = 1/(1 + p|x|) (Abramowitz-Stegun 7.1.26, |error| <= 1.5e-7),
 *   floor/ceil from TRUNC and one compare, round half to even from trunc and the exact remainder x - trunc(x),
 *   pow as tinygrad's xpow (exp2(e*log2|b|) with the sign of a negative base for an integral exponent),
 *   minimum = inverse(max(inverse a, inverse b)) (-x, ~x, not x: tinygrad's _inverse).
 * Integer pow is exact (square and multiply over the exponent's bits, wrapping as numpy) instead of
 * tinygrad's float pow and round, which loses integers past 2^24. Integer division and remainder by zero
 * give 0 (numpy) instead of trapping: the divisor is replaced by 1 first. Float fmod is x - y*trunc(x/y)
 * (tinygrad's mod writes x - y*floor(x/y)); python mod adds y to a non-zero remainder whose sign differs. */
#include <math.h>

#include "tensor/tensor_internal.h"

static const double LN2 = 0.69314718055994530942, HALF_PI = 1.57079632679489661923;

#define GUARD1(name, a) \
  if (!(a) || t_dead(a)) return (a) ? &(a)->c->err_t : t_null_arg(name, "a", NULL)

static enum ir_scalar sc(node x) { return IR_DT_SCALAR(x->dt); }
static bool is_f(node x) { return ir_scalar_is_float(sc(x)); }
static bool is_uint(node x) { return ir_scalar_is_int(sc(x)) && !ir_scalar_is_signed(sc(x)); }
static node kc(bg_tctx *c, node like, double v) { return like ? n_const(c, sc(like), v, t_shape(c, like)) : NULL; }
static node add(bg_tctx *c, node a, node b) { return n_alu(c, IR_ADD, a, b); }
static node sub(bg_tctx *c, node a, node b) { return n_alu(c, IR_SUB, a, b); }
static node mul(bg_tctx *c, node a, node b) { return n_alu(c, IR_MUL, a, b); }
static node lt(bg_tctx *c, node a, node b) { return n_alu(c, IR_CMPLT, a, b); }
static node eq(bg_tctx *c, node a, node b) { return n_alu(c, IR_CMPEQ, a, b); }
static node ne(bg_tctx *c, node a, node b) { return n_alu(c, IR_CMPNE, a, b); }
static node addk(bg_tctx *c, node a, double v) { return add(c, a, kc(c, a, v)); }
static node mulk(bg_tctx *c, node a, double v) { return mul(c, a, kc(c, a, v)); }
static node floaty(bg_tctx *c, node x) { return x && !is_f(x) ? n_cast(c, x, IR_DT_FLOAT32) : x; }

static node n_trunc(bg_tctx *c, node x) { return is_f(x) ? n_unary(c, IR_TRUNC, x) : x; }
static node n_exp(bg_tctx *c, node x) { return n_unary(c, IR_EXP2, mulk(c, x, 1.0 / LN2)); }
static node n_sigmoid(bg_tctx *c, node x) {
  return n_unary(c, IR_RECIP, addk(c, n_unary(c, IR_EXP2, mulk(c, x, -1.0 / LN2)), 1.0));
}
static node n_cos(bg_tctx *c, node x) { return n_unary(c, IR_SIN, sub(c, kc(c, x, HALF_PI), x)); }

/* |x| as where(0 < x, x, -x): -0 gives +0, NaN stays NaN, and the gradient flows through both arms. */
static node n_abs(bg_tctx *c, node x) {
  if (sc(x) == IR_DT_BOOL || is_uint(x)) return x;
  return n_where(c, lt(c, kc(c, x, 0), x), x, n_unary(c, IR_NEG, x));
}

/* -1/0/1 in x's dtype; NaN stays NaN (tinygrad's `+ x*0` would also turn +-inf into NaN). */
static node n_sign(bg_tctx *c, node x) {
  if (sc(x) == IR_DT_BOOL) return x;
  node z = kc(c, x, 0), r = n_where(c, lt(c, z, x), kc(c, x, 1), z);
  if (is_uint(x)) return r;
  r = n_where(c, lt(c, x, z), kc(c, x, -1), r);
  return is_f(x) ? n_where(c, ne(c, x, x), x, r) : r;
}

/* tinygrad's _inverse: an order-reversing map that is its own inverse and cannot overflow. */
node n_inverse(bg_tctx *c, node x) {
  if (!x) return NULL;
  if (is_f(x)) return n_unary(c, IR_NEG, x);
  if (sc(x) == IR_DT_BOOL) return eq(c, x, kc(c, x, 0));
  return n_alu(c, IR_XOR, x, kc(c, x, -1)); /* ~x: all ones in every width (ir_const_float truncates -1) */
}

/* ---- unary entry points ---- */

typedef node (*ufn)(bg_tctx *c, node x);

static bg_tensor *unary(const char *name, bg_tensor *a, ufn f, bool to_float) {
  GUARD1(name, a);
  node x = t_node(a);
  return t_wrap(a->c, f(a->c, to_float ? floaty(a->c, x) : x));
}

static node f_tan(bg_tctx *c, node x) { return n_alu(c, IR_FDIV, n_unary(c, IR_SIN, x), n_cos(c, x)); }
static node f_tanh(bg_tctx *c, node x) { return addk(c, mulk(c, n_sigmoid(c, mulk(c, x, 2.0)), 2.0), -1.0); }

static node f_erf(bg_tctx *c, node x) {
  static const double p = 0.3275911, a[5] = {0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429};
  node t = n_unary(c, IR_RECIP, addk(c, mulk(c, n_abs(c, x), p), 1.0));
  node poly = kc(c, x, a[4]);
  for (int i = 3; i >= 0; i--) poly = addk(c, mul(c, poly, t), a[i]); /* Horner: a0 + t*(a1 + t*(...)) */
  node y = sub(c, kc(c, x, 1.0), mul(c, mul(c, poly, t), n_exp(c, n_unary(c, IR_NEG, mul(c, x, x)))));
  return mul(c, n_sign(c, x), y);
}

static node f_floor(bg_tctx *c, node x) {
  if (!is_f(x)) return x;
  node t = n_trunc(c, x);
  return n_where(c, lt(c, x, t), addk(c, t, -1.0), t);
}

static node f_ceil(bg_tctx *c, node x) {
  if (!is_f(x)) return x;
  node t = n_trunc(c, x);
  return n_where(c, lt(c, t, x), addk(c, t, 1.0), t);
}

/* Half to even: d = x - trunc(x) is exact; step away from zero when |d| > 1/2, or |d| = 1/2 and trunc(x)
 * is odd. Past 2^23 (float32) every value is an integer, d = 0; +-inf give d = NaN and stay. */
static node f_round(bg_tctx *c, node x) {
  if (!is_f(x)) return x;
  node t = n_trunc(c, x), d = n_abs(c, sub(c, x, t)), half = kc(c, x, 0.5), h = mulk(c, t, 0.5);
  node odd = ne(c, n_trunc(c, h), h);
  node up = n_alu(c, IR_OR, lt(c, half, d), n_alu(c, IR_AND, eq(c, d, half), odd));
  node step = n_where(c, lt(c, x, kc(c, x, 0)), kc(c, x, -1), kc(c, x, 1));
  return n_where(c, up, add(c, t, step), t);
}

bg_tensor *bg_tn_cos(bg_tensor *a) { return unary("cos", a, n_cos, true); }
bg_tensor *bg_tn_tan(bg_tensor *a) { return unary("tan", a, f_tan, true); }
bg_tensor *bg_tn_tanh(bg_tensor *a) { return unary("tanh", a, f_tanh, true); }
bg_tensor *bg_tn_sigmoid(bg_tensor *a) { return unary("sigmoid", a, n_sigmoid, true); }
bg_tensor *bg_tn_erf(bg_tensor *a) { return unary("erf", a, f_erf, true); }
bg_tensor *bg_tn_abs(bg_tensor *a) { return unary("abs", a, n_abs, false); }
bg_tensor *bg_tn_sign(bg_tensor *a) { return unary("sign", a, n_sign, false); }
bg_tensor *bg_tn_floor(bg_tensor *a) { return unary("floor", a, f_floor, false); }
bg_tensor *bg_tn_ceil(bg_tensor *a) { return unary("ceil", a, f_ceil, false); }
bg_tensor *bg_tn_round(bg_tensor *a) { return unary("round", a, f_round, false); }
bg_tensor *bg_tn_trunc(bg_tensor *a) { return unary("trunc", a, n_trunc, false); }

static node f_not(bg_tctx *c, node x) { return eq(c, x, kc(c, x, 0)); }
static node f_false(bg_tctx *c, node x) { return n_const(c, IR_DT_BOOL, 0, t_shape(c, x)); }
static node f_isnan(bg_tctx *c, node x) { return is_f(x) ? ne(c, x, x) : f_false(c, x); }
static node f_isinf(bg_tctx *c, node x) {
  return is_f(x) ? n_alu(c, IR_OR, eq(c, x, kc(c, x, INFINITY)), eq(c, x, kc(c, x, -INFINITY))) : f_false(c, x);
}

bg_tensor *bg_tn_logical_not(bg_tensor *a) { return unary("logical_not", a, f_not, false); }
bg_tensor *bg_tn_isnan(bg_tensor *a) { return unary("isnan", a, f_isnan, false); }
bg_tensor *bg_tn_isinf(bg_tensor *a) { return unary("isinf", a, f_isinf, false); }

/* ---- binary ops ---- */

/* Both operands broadcast and cast to the promoted dtype; false with the error tensor in *err. */
static bool prep2(const char *name, bg_tensor *a, bg_tensor *b, node *x, node *y, bg_tensor **err) {
  if (!a || !b) {
    *err = t_null_arg(name, a ? "b" : "a", a ? a : b);
    return false;
  }
  bg_tctx *c = a->c;
  *err = &c->err_t;
  if (b->c != c) {
    t_fail(c, "%s: tensors belong to different contexts", name);
    return false;
  }
  if (t_dead(a) || t_dead(b)) return false;
  *x = t_node(a);
  *y = t_node(b);
  if (!n_broadcast(c, x, y)) {
    SHSTR(sa, t_shape(c, t_node(a)));
    SHSTR(sb, t_shape(c, t_node(b)));
    t_fail(c, "%s: shapes %s and %s do not broadcast", name, sa, sb);
    return false;
  }
  enum ir_scalar s = t_promote(sc(*x), sc(*y));
  *x = n_cast(c, *x, s);
  *y = n_cast(c, *y, s);
  return true;
}

static bg_tensor *bad_dtype(bg_tctx *c, const char *name, node x, const char *want) {
  return t_fail(c, "%s: dtype %s not supported, expected %s", name, ir_scalar_name(sc(x)), want);
}

/* tinygrad's xpow for floats: exp2(e * log2|b|), NaN for a negative base and a non-integral exponent,
 * the sign of the base for an odd integral one; b^0 = 1^e = 1 (C pow, also for NaN). */
static node pow_f(bg_tctx *c, node b, node e) {
  node z = kc(c, b, 0), one = kc(c, b, 1), negb = lt(c, b, z);
  node ret = n_unary(c, IR_EXP2, mul(c, n_unary(c, IR_LOG2, n_abs(c, b)), e));
  node te = n_trunc(c, e), h = mulk(c, te, 0.5);
  node adj = n_where(c, ne(c, e, te), kc(c, b, NAN), n_where(c, ne(c, n_trunc(c, h), h), kc(c, b, -1), one));
  node r = mul(c, ret, n_where(c, negb, adj, one));
  return n_where(c, n_alu(c, IR_OR, eq(c, e, z), eq(c, b, one)), one, r);
}

/* Integers: square and multiply over every bit of the exponent (wraps like numpy's integer power); a
 * negative exponent truncates 1/b^|e| as tinygrad's float pow and round would: 1, +-1 for b = -1, else 0. */
static node pow_i(bg_tctx *c, node b, node e) {
  if (sc(b) == IR_DT_BOOL) return n_where(c, e, b, kc(c, b, 1)); /* b^e = b or not e */
  bool sgn = ir_scalar_is_signed(sc(b));
  unsigned bits = 8u * ir_scalar_size(sc(b)) - (sgn ? 1u : 0u);
  node one = kc(c, b, 1), z = kc(c, b, 0), r = one, p = b;
  for (unsigned k = 0; k < bits; k++) {
    node bit = ne(c, n_alu(c, IR_AND, n_alu(c, IR_SHR, e, kc(c, e, k)), one), z);
    r = n_where(c, bit, mul(c, r, p), r);
    if (k + 1 < bits) p = mul(c, p, p);
  }
  if (!sgn) return r;
  node odd = ne(c, n_alu(c, IR_AND, e, one), z);
  node neg = n_where(c, eq(c, b, one), one,
                     n_where(c, eq(c, b, kc(c, b, -1)), n_where(c, odd, kc(c, b, -1), one), z));
  return n_where(c, lt(c, e, z), neg, r);
}

bg_tensor *bg_tn_pow(bg_tensor *a, bg_tensor *b) {
  node x, y;
  bg_tensor *err;
  if (!prep2("pow", a, b, &x, &y, &err)) return err;
  return t_wrap(a->c, is_f(x) ? pow_f(a->c, x, y) : pow_i(a->c, x, y));
}

bg_tensor *bg_tn_minimum(bg_tensor *a, bg_tensor *b) {
  node x, y;
  bg_tensor *err;
  if (!prep2("minimum", a, b, &x, &y, &err)) return err;
  bg_tctx *c = a->c;
  if (sc(x) == IR_DT_BOOL) return t_wrap(c, n_alu(c, IR_AND, x, y)); /* max of bools is or, min is and */
  return t_wrap(c, n_inverse(c, n_alu(c, IR_MAX, n_inverse(c, x), n_inverse(c, y))));
}

/* C-style truncating quotient or remainder of integers; a zero divisor gives 0 (numpy) instead of a trap. */
static node idivmod(bg_tctx *c, enum ir_op op, node x, node y) {
  node z = kc(c, y, 0), zero = eq(c, y, z);
  return n_where(c, zero, z, n_alu(c, op, x, n_where(c, zero, kc(c, y, 1), y)));
}

/* C fmod: the sign of the dividend. Floats: x - y*trunc(x/y) (y = 0 gives NaN as C); 16-bit floats in float32,
 * where the quotient's rounding rarely moves trunc across an integer. */
static node fmod_any(bg_tctx *c, node x, node y) {
  if (!is_f(x)) return idivmod(c, IR_MOD, x, y);
  if (ir_scalar_size(sc(x)) < 4)
    return n_cast(c, fmod_any(c, n_cast(c, x, IR_DT_FLOAT32), n_cast(c, y, IR_DT_FLOAT32)), sc(x));
  return sub(c, x, mul(c, y, n_trunc(c, n_alu(c, IR_FDIV, x, y))));
}

static bool int_only(bg_tctx *c, const char *name, node x) {
  if (ir_scalar_is_int(sc(x))) return true;
  bad_dtype(c, name, x, "an integer dtype");
  return false;
}

static bool num_only(bg_tctx *c, const char *name, node x) {
  if (ir_scalar_is_int(sc(x)) || is_f(x)) return true;
  bad_dtype(c, name, x, "an integer or float dtype");
  return false;
}

bg_tensor *bg_tn_idiv(bg_tensor *a, bg_tensor *b) {
  node x, y;
  bg_tensor *err;
  if (!prep2("idiv", a, b, &x, &y, &err)) return err;
  if (!int_only(a->c, "idiv", x)) return &a->c->err_t;
  return t_wrap(a->c, idivmod(a->c, IR_IDIV, x, y));
}

bg_tensor *bg_tn_fmod(bg_tensor *a, bg_tensor *b) {
  node x, y;
  bg_tensor *err;
  if (!prep2("fmod", a, b, &x, &y, &err)) return err;
  if (!num_only(a->c, "fmod", x)) return &a->c->err_t;
  return t_wrap(a->c, fmod_any(a->c, x, y));
}

/* Python %: the C remainder, plus y where it is non-zero and its sign differs from y's. */
bg_tensor *bg_tn_mod(bg_tensor *a, bg_tensor *b) {
  node x, y;
  bg_tensor *err;
  if (!prep2("mod", a, b, &x, &y, &err)) return err;
  bg_tctx *c = a->c;
  if (!num_only(c, "mod", x)) return &c->err_t;
  node r = fmod_any(c, x, y);
  if (is_uint(x)) return t_wrap(c, r);
  node z = kc(c, r, 0);
  node fix = n_alu(c, IR_AND, ne(c, r, z), ne(c, lt(c, r, z), lt(c, y, z)));
  return t_wrap(c, add(c, r, n_where(c, fix, y, z)));
}

bg_tensor *bg_tn_bitwise(bg_tensor *a, bg_tensor *b, char op) {
  node x, y;
  bg_tensor *err;
  if (!prep2("bitwise", a, b, &x, &y, &err)) return err;
  bg_tctx *c = a->c;
  enum ir_op o = op == '&' ? IR_AND : op == '|' ? IR_OR : op == '^' ? IR_XOR : op == '<' ? IR_SHL : op == '>' ? IR_SHR
                                                                                                   : IR_OP_COUNT;
  if (o == IR_OP_COUNT)
    return t_fail(c, "bitwise: op '%c' (%d) is not one of '&', '|', '^', '<' (shl), '>' (shr)", op > 31 ? op : '?', op);
  bool shift = o == IR_SHL || o == IR_SHR;
  if (is_f(x) || (shift && sc(x) == IR_DT_BOOL))
    return t_fail(c, "bitwise '%c': dtype %s not supported, expected %s", op, ir_scalar_name(sc(x)),
                  shift ? "an integer dtype" : "an integer or bool dtype");
  return t_wrap(c, n_alu(c, o, x, y));
}

bg_tensor *bg_tn_clip(bg_tensor *a, bg_tensor *lo, bg_tensor *hi) {
  GUARD1("clip", a);
  bg_tensor *r = a;
  if (lo) r = bg_tn_maximum(r, lo);
  if (hi) r = bg_tn_minimum(r, hi);
  return r;
}
