/* onnx/ox_ops_elem.c: elementwise operators (ONNX Operators.md: unary math, binary arithmetic and comparisons,
 * variadic Sum/Max/Min/Mean, activations, Cast, Where, Clip, Identity, Dropout at inference). */
#include <math.h>
#include <string.h>

#include "ox.h"
#include "ox_ops.h"

bg_tensor *ox_scalar_like(bg_tensor *a, double v) { return bg_tn_scalar(bg_tn_ctx(a), bg_tn_dtype(a), v); }

bg_tensor *ox_minimum(bg_tensor *a, bg_tensor *b) {
  return bg_tn_minimum(a, b);
}

bg_tensor *ox_not(bg_tensor *a) { return bg_tn_logical_not(a); }

typedef bg_tensor *(*un_fn)(bg_tensor *);
static bg_tensor *softsign(bg_tensor *a) {
  return bg_tn_div(a, bg_tn_addc(bg_tn_abs(a), 1));
}
static bg_tensor *softplus(bg_tensor *a) { return bg_tn_log(bg_tn_addc(bg_tn_exp(a), 1)); }
static bg_tensor *identity(bg_tensor *a) { return a; }

static un_fn unary_fn(const char *op, bool *needs_abs) {
  *needs_abs = false;
  if (!strcmp(op, "Neg")) return bg_tn_neg;
  if (!strcmp(op, "Exp")) return bg_tn_exp;
  if (!strcmp(op, "Log")) return bg_tn_log;
  if (!strcmp(op, "Sqrt")) return bg_tn_sqrt;
  if (!strcmp(op, "Reciprocal")) return bg_tn_reciprocal;
  if (!strcmp(op, "Relu")) return bg_tn_relu;
  if (!strcmp(op, "Sin")) return bg_tn_sin;
  if (!strcmp(op, "Identity")) return identity;
  if (!strcmp(op, "Softplus")) return softplus;
  if (!strcmp(op, "Abs")) return bg_tn_abs;
  if (!strcmp(op, "Cos")) return bg_tn_cos;
  if (!strcmp(op, "Tan")) return bg_tn_tan;
  if (!strcmp(op, "Tanh")) return bg_tn_tanh;
  if (!strcmp(op, "Sigmoid")) return bg_tn_sigmoid;
  if (!strcmp(op, "Erf")) return bg_tn_erf;
  if (!strcmp(op, "Sign")) return bg_tn_sign;
  if (!strcmp(op, "Floor")) return bg_tn_floor;
  if (!strcmp(op, "Ceil")) return bg_tn_ceil;
  if (!strcmp(op, "Round")) return bg_tn_round;
  if (!strcmp(op, "IsNaN")) return bg_tn_isnan;
  if (!strcmp(op, "Not")) return ox_not;
  if (!strcmp(op, "Softsign")) {
    *needs_abs = true;
    return softsign;
  }
  return NULL;
}

int ox_op_unary(ox_ctx *x) {
  bool needs_abs;
  un_fn f = unary_fn(x->node->pb->op_type, &needs_abs);
  (void)needs_abs;
  if (!f) return ox_unsup(x, "no tensor function for %s", x->node->pb->op_type);
  return ox_set(x, 0, f(ox_in(x, 0)));
}

/* Integer division truncates (ONNX Div on integers, as C). */
static bg_tensor *div_op(bg_tensor *a, bg_tensor *b) {
  enum bg_dtype t = bg_tn_dtype(a);
  if (ox_is_float(t)) return bg_tn_div(a, b);
  return bg_tn_idiv(a, b);
}

int ox_op_binary(ox_ctx *x) {
  const char *op = x->node->pb->op_type;
  bg_tensor *a = ox_in(x, 0), *b = ox_in(x, 1), *r = NULL;
  if (!strcmp(op, "Add")) r = bg_tn_add(a, b);
  else if (!strcmp(op, "Sub")) r = bg_tn_sub(a, b);
  else if (!strcmp(op, "Mul")) r = bg_tn_mul(a, b);
  else if (!strcmp(op, "Div")) r = div_op(a, b);
  else if (!strcmp(op, "Equal")) r = bg_tn_eq(a, b);
  else if (!strcmp(op, "Less")) r = bg_tn_lt(a, b);
  else if (!strcmp(op, "Greater")) r = bg_tn_lt(b, a);
  else if (!strcmp(op, "LessOrEqual")) r = ox_not(bg_tn_lt(b, a));
  else if (!strcmp(op, "GreaterOrEqual")) r = ox_not(bg_tn_lt(a, b));
  else if (!strcmp(op, "And")) r = bg_tn_where(a, b, a);
  else if (!strcmp(op, "Or")) r = bg_tn_where(a, a, b);
  else if (!strcmp(op, "Xor")) r = bg_tn_ne(a, b);
  else if (!strcmp(op, "PRelu")) {
    /* before opset 7 a 1-D slope of C elements applies along axis 1 (the channel) */
    unsigned nd = bg_tn_ndim(a);
    if (x->m->opset < 7 && bg_tn_ndim(b) == 1 && nd > 2 && bg_tn_shape(b)[0] == bg_tn_shape(a)[1] &&
        bg_tn_shape(b)[0] != 1) {
      int64_t sh[BG_MAX_DIMS];
      sh[0] = bg_tn_shape(b)[0];
      for (unsigned d = 1; d + 1 < nd; d++) sh[d] = 1;
      b = bg_tn_reshape(b, nd - 1, sh);
    }
    r = bg_tn_where(bg_tn_lt(a, ox_scalar_like(a, 0)), bg_tn_mul(a, b), a);
  }
  else if (!strcmp(op, "Pow")) {
    r = bg_tn_pow(a, bg_tn_dtype(b) == bg_tn_dtype(a) ? b : bg_tn_cast(b, bg_tn_dtype(a)));
  } else if (!strcmp(op, "Mod")) {
    int64_t fm;
    int e = ox_attr_int(x, "fmod", 0, &fm);
    if (e < 0) return e;
    r = fm ? bg_tn_fmod(a, b) : bg_tn_mod(a, b);
  } else if (!strcmp(op, "BitShift")) {
    char dir[16];
    int e = ox_attr_string(x, "direction", "", dir, sizeof dir);
    if (e < 0) return e;
    if (strcmp(dir, "LEFT") && strcmp(dir, "RIGHT"))
      return ox_err(x, BG_EFORMAT, "attribute 'direction' is '%s', expected LEFT or RIGHT", dir);
    r = bg_tn_bitwise(a, b, dir[0] == 'L' ? '<' : '>');
  } else if (!strncmp(op, "Bitwise", 7)) {
    r = bg_tn_bitwise(a, b, !strcmp(op, "BitwiseAnd") ? '&' : !strcmp(op, "BitwiseOr") ? '|' : '^');
  } else {
    return ox_unsup(x, "no binary mapping");
  }
  return ox_set(x, 0, r);
}

int ox_op_variadic(ox_ctx *x) {
  const char *op = x->node->pb->op_type;
  bg_tensor *r = ox_in(x, 0);
  if (!r) return ox_err(x, BG_EFORMAT, "input 0 is missing");
  for (unsigned i = 1; i < x->nin; i++) {
    bg_tensor *b = ox_in(x, i);
    if (!b) continue;
    if (!strcmp(op, "Max")) r = bg_tn_maximum(r, b);
    else if (!strcmp(op, "Min")) r = ox_minimum(r, b);
    else r = bg_tn_add(r, b);
  }
  if (!strcmp(op, "Mean")) r = bg_tn_mulc(r, 1.0 / x->nin);
  return ox_set(x, 0, r);
}

int ox_op_where(ox_ctx *x) { return ox_set(x, 0, bg_tn_where(ox_in(x, 0), ox_in(x, 1), ox_in(x, 2))); }

int ox_op_clip(ox_ctx *x) {
  bg_tensor *a = ox_in(x, 0), *lo = NULL, *hi = NULL;
  if (x->m->opset < 11) {
    double vlo, vhi;
    int r = ox_attr_float(x, "min", -INFINITY, &vlo);
    if (r >= 0) r = ox_attr_float(x, "max", INFINITY, &vhi);
    if (r < 0) return r;
    if (!isinf(vlo)) lo = ox_scalar_like(a, vlo);
    if (!isinf(vhi)) hi = ox_scalar_like(a, vhi);
  } else {
    lo = ox_in(x, 1);
    hi = ox_in(x, 2);
  }
  if (lo) a = bg_tn_maximum(a, lo);
  if (hi) a = ox_minimum(a, hi);
  return ox_set(x, 0, a);
}

int ox_op_activation(ox_ctx *x) {
  const char *op = x->node->pb->op_type;
  bg_tensor *a = ox_in(x, 0), *zero = ox_scalar_like(a, 0), *r;
  double alpha, beta, gamma;
  int e = 0;
  if (!strcmp(op, "LeakyRelu")) {
    e = ox_attr_float(x, "alpha", 0.01, &alpha);
    r = bg_tn_where(bg_tn_lt(a, zero), bg_tn_mulc(a, alpha), a);
  } else if (!strcmp(op, "Elu")) {
    e = ox_attr_float(x, "alpha", 1.0, &alpha);
    r = bg_tn_elu(a, alpha);
  } else if (!strcmp(op, "Selu")) {
    /* defaults: ONNX Selu's alpha and gamma as float32 constants */
    e = ox_attr_float(x, "alpha", 1.67326319217681884765625, &alpha);
    if (e >= 0) e = ox_attr_float(x, "gamma", 1.05070102214813232421875, &gamma);
    r = bg_tn_mulc(bg_tn_where(bg_tn_lt(zero, a), a, bg_tn_mulc(bg_tn_addc(bg_tn_exp(a), -1), alpha)), gamma);
  } else if (!strcmp(op, "Celu")) {
    e = ox_attr_float(x, "alpha", 1.0, &alpha);
    r = bg_tn_add(bg_tn_relu(a),
                  ox_minimum(zero, bg_tn_mulc(bg_tn_addc(bg_tn_exp(bg_tn_mulc(a, 1.0 / alpha)), -1), alpha)));
  } else if (!strcmp(op, "ThresholdedRelu")) {
    e = ox_attr_float(x, "alpha", 1.0, &alpha);
    r = bg_tn_where(bg_tn_lt(ox_scalar_like(a, alpha), a), a, zero);
  } else if (!strcmp(op, "HardSigmoid") || !strcmp(op, "HardSwish")) {
    bool swish = op[4] == 'S' && op[5] == 'w';
    e = ox_attr_float(x, "alpha", swish ? 1.0 / 6 : 0.2, &alpha);
    if (e >= 0) e = ox_attr_float(x, "beta", 0.5, &beta);
    r = ox_minimum(ox_scalar_like(a, 1), bg_tn_maximum(zero, bg_tn_addc(bg_tn_mulc(a, alpha), beta)));
    if (swish) r = bg_tn_mul(a, r);
  } else if (!strcmp(op, "Mish")) {
    r = bg_tn_mul(a, bg_tn_tanh(bg_tn_log(bg_tn_addc(bg_tn_exp(a), 1))));
  } else {
    return ox_unsup(x, "no activation mapping");
  }
  if (e < 0) return e;
  return ox_set(x, 0, r);
}

int ox_op_isinf(ox_ctx *x) {
  int64_t neg, pos;
  int e = ox_attr_int(x, "detect_negative", 1, &neg);
  if (e >= 0) e = ox_attr_int(x, "detect_positive", 1, &pos);
  if (e < 0) return e;
  bg_tensor *a = ox_in(x, 0);
  bg_tensor *r;
  if (neg && pos) {
    r = bg_tn_isinf(a);
  } else if (neg || pos) {
    r = bg_tn_eq(a, ox_scalar_like(a, neg ? -INFINITY : INFINITY));
  } else {
    r = bg_tn_lt(a, a); /* all false (NaN < NaN too) */
  }
  return ox_set(x, 0, r);
}

int ox_op_cast(ox_ctx *x) {
  bg_tensor *a = ox_in(x, 0);
  enum bg_dtype dt;
  const char *why = NULL;
  if (!strcmp(x->node->pb->op_type, "CastLike")) {
    dt = bg_tn_dtype(ox_in(x, 1));
  } else {
    int64_t to;
    int e = ox_attr_int(x, "to", -1, &to);
    if (e < 0) return e;
    if (to < 0) return ox_err(x, BG_EFORMAT, "attribute 'to' is missing");
    if (ox_dtype((int)to, &dt, &why) < 0)
      return ox_unsup(x, "attribute 'to' = %lld (%s) is %s", (long long)to, ox_dtype_name((int)to), why);
  }
  return ox_set(x, 0, bg_tn_dtype(a) == dt ? a : bg_tn_cast(a, dt));
}

int ox_op_dropout(ox_ctx *x) {
  /* inference: identity; the mask output (opset >= 7) is all true */
  bg_tensor *a = ox_in(x, 0);
  if (ox_has(x, 2)) {
    double tm;
    int e = ox_scalar(x, 2, &tm);
    if (e < 0) return e;
    if (tm != 0) return ox_unsup(x, "training_mode (a training op)");
  }
  int e = ox_set(x, 0, a);
  if (e >= 0 && x->nout > 1)
    e = ox_set(x, 1, bg_tn_full(x->c, BG_BOOL, bg_tn_ndim(a), bg_tn_shape(a), 1));
  return e;
}
